"""`questwall audit`: check the audit trail's chain, and read it."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from api import audit
from api.cli.common import _require_ready
from api.core.db import get_engine, new_session


@click.group("audit")
def audit_group() -> None:
    """The audit trail of changes to money and access (docs/operations.md#audit-trail)."""


@audit_group.command("verify")
def verify_cmd() -> None:
    """Recompute the trail's hash chain; name the first row that does not match (exit 1).
    Prints the last row's hash: keep it elsewhere, to know later that nothing was cut off
    the end."""
    _require_ready()
    found = audit.verify(get_engine())
    if found.broken_at is not None:
        click.echo(f"Row {found.broken_at} does not match: {found.why}.", err=True)
        sys.exit(1)
    click.echo(f"{found.rows} event(s) chain as recorded. Last hash: {found.last_hash}")


def _filter_options(command: Callable[..., None]) -> Callable[..., None]:
    """The filters `list` and `export` share."""
    options = [
        click.option(
            "--action",
            default="",
            help="This action (offerwall.approved), or a prefix (offerwall.).",
        ),
        click.option("--actor", default="", help="An account's email or id, or a CLI user."),
        click.option("--target", default="", metavar="TYPE:ID", help="One object (offerwall:ID)."),
        click.option("--since", default="", metavar="DATE", help="From this ISO date or time."),
        click.option(
            "--until", default="", metavar="DATE", help="Before this time (a date: through it)."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _filters(action: str, actor: str, target: str, since: str, until: str) -> audit.Filters:
    """The filters, or a usage error naming the option."""
    try:
        kind, ident = audit.parse_target(target)
        return audit.filters(
            actor=actor,
            action=action,
            target_type=kind,
            target_id=ident,
            since=since,
            until=until,
        )
    except audit.FilterError as exc:
        option = {"target_type": "target", "target_id": "target"}.get(exc.field or "", exc.field)
        raise click.BadParameter(exc.message, param_hint=f"--{option}") from None


@audit_group.command("list")
@_filter_options
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_cmd(
    action: str, actor: str, target: str, since: str, until: str, limit: int, as_json: bool
) -> None:
    """The newest events first."""
    wanted = _filters(action, actor, target, since, until)
    _require_ready()
    rows: list[dict[str, Any]] = []
    with new_session(get_engine()) as session:
        before = None
        while len(rows) < limit:  # a page at a time, up to the limit
            page = audit.read_page(session, wanted, before=before, limit=limit - len(rows))
            rows += page.rows
            if page.older is None:
                break
            before = page.older
    for row in rows:
        if as_json:
            click.echo(json.dumps(audit.plain(row), default=str, ensure_ascii=False))
            continue
        who = row["actor_email"] or row["actor_kind"]
        changes = ", ".join(f"{k}: {v[0]} → {v[1]}" for k, v in row["changes"].items())
        click.echo(
            f"{row['at']:%Y-%m-%d %H:%M:%S} {who} {row['action']} "
            f"{row['target_type']} {row['target_name'] or row['target_id']}"
            + (f" ({changes})" if changes else "")
        )


@audit_group.command("export")
@click.option(
    "--format", "fmt", required=True, type=click.Choice(audit.FORMATS), help="jsonl or csv."
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True),
    default="-",
    help="The file to write (default: standard output).",
)
@_filter_options
def export_cmd(
    fmt: str, output: str, action: str, actor: str, target: str, since: str, until: str
) -> None:
    """Every matching event, oldest first, as JSON Lines or CSV (changes as JSON). The
    export is recorded in the trail as audit.exported, by the user who ran it."""
    wanted = _filters(action, actor, target, since, until)
    _require_ready()
    # The file is opened first: an export that cannot be written is not recorded.
    with click.open_file(output, "w", encoding="utf-8") as out:
        made = audit.export(get_engine(), wanted, fmt)
        for line in made.lines:
            out.write(line)
    if output != "-":
        click.echo(f"{made.rows} event(s) written to {output}.", err=True)
