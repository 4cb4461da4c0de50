"""`questwall audit`: check the audit trail's chain, and read it."""

from __future__ import annotations

import json
import sys

import click
import sqlalchemy as sa

from api import audit
from api.cli.common import _require_ready
from api.core.db import get_engine, new_session
from models import AuditEvent


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


@audit_group.command("list")
@click.option("--action", default="", help="Only this action, e.g. offerwall.approved.")
@click.option("--actor", default="", help="Only this actor's email (or the CLI's user).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_cmd(action: str, actor: str, limit: int, as_json: bool) -> None:
    """The newest events first."""
    _require_ready()
    table = AuditEvent.__table__  # type: ignore[attr-defined]
    query = sa.select(table).order_by(table.c.id.desc()).limit(limit)
    if action:
        query = query.where(table.c.action == action)
    if actor:
        query = query.where(table.c.actor_email == actor)
    with new_session(get_engine()) as session:
        rows = session.execute(query).mappings().all()
    for row in rows:
        if as_json:
            click.echo(json.dumps(dict(row), default=str, sort_keys=True))
            continue
        who = row["actor_email"] or row["actor_kind"]
        changes = ", ".join(f"{k}: {v[0]} → {v[1]}" for k, v in row["changes"].items())
        click.echo(
            f"{row['at']:%Y-%m-%d %H:%M:%S} {who} {row['action']} "
            f"{row['target_type']} {row['target_name'] or row['target_id']}"
            + (f" ({changes})" if changes else "")
        )
