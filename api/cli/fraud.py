"""`questwall fraud …`: the review queue, offerwalls' rules and staff's blocklist from the
command line, through `api/conversions/review.py`, `api/fraud/rules.py` and
`api/fraud/blocklist.py` (the portal's Fraud page calls the same functions). Decisions are
recorded as made by "cli"."""

from __future__ import annotations

from typing import Any

import click

from api.cli.common import _print_json, _require_ready
from api.cli.conversions import ACTOR, _conversion_json, _minute
from api.conversions import ledger as conversions
from api.conversions import review
from api.core.config import get_settings
from api.core.db import new_session, write_session
from api.core.refusals import DomainError
from api.fraud import OfferwallRules, blocklist, offerwall_rules, set_offerwall_rules
from api.fraud import policy as fraud
from api.publishers import offerwalls
from models import BlockKind, ConversionStatus


@click.group("fraud")
def fraud_group() -> None:
    """Review held conversions, set offerwalls' fraud rules, edit the blocklist."""


def _write(fn: Any) -> Any:
    _require_ready()
    try:
        with write_session() as session:
            return fn(session)
    except (DomainError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@fraud_group.command("held")
@click.option("--search", default="", help="As `questwall conversion list --search`.")
@click.option("--page", default=1, show_default=True, type=click.IntRange(min=1))
def fraud_held(search: str, page: int) -> None:
    """List the conversions held for review, newest first, 20 to a page."""
    _require_ready()
    with new_session() as session:
        window = conversions.search(
            session=session,
            studio_id=None,
            text=search,
            status=ConversionStatus.PENDING,
            page=page,
        )
    _print_json(
        {
            "total": window.total,
            "page": window.page,
            "pages": window.pages,
            "conversions": [_conversion_json(row) for row in window.rows],
        }
    )


def _decided(result: review.Decided) -> None:
    _print_json({"decided": result.decided, "skipped": result.skipped})


@fraud_group.command("approve")
@click.argument("transaction_ids", nargs=-1, required=True)
@click.option("--note", default="", help="Why, for the record (at most 500 characters).")
def fraud_approve(transaction_ids: tuple[str, ...], note: str) -> None:
    """Approve held conversions: each one's postback is queued once."""
    _decided(
        _write(
            lambda s: review.approve(
                session=s, transaction_ids=transaction_ids, actor=ACTOR, studio_id=None, note=note
            )
        )
    )


@fraud_group.command("reject")
@click.argument("transaction_ids", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why (3 to 500 characters).")
def fraud_reject(transaction_ids: tuple[str, ...], reason: str) -> None:
    """Reject held conversions: never paid, and no postback unless the offerwall asked for
    `status=rejected` ones."""
    _decided(
        _write(
            lambda s: review.reject(
                session=s,
                transaction_ids=transaction_ids,
                actor=ACTOR,
                studio_id=None,
                reason=reason,
            )
        )
    )


@fraud_group.command("flag")
@click.argument("transaction_ids", nargs=-1, required=True)
def fraud_flag(transaction_ids: tuple[str, ...]) -> None:
    """Keep held conversions for a reviewer: they are not approved by themselves."""
    _decided(
        _write(
            lambda s: review.flag(
                session=s, transaction_ids=transaction_ids, actor=ACTOR, studio_id=None
            )
        )
    )


def _rules_json(rules: OfferwallRules) -> dict[str, Any]:
    return {
        "offerwallId": rules.id,
        "name": rules.name,
        "owid": rules.owid,
        "actions": rules.actions,
        "reviewPostbacks": rules.review_postbacks,
    }


@fraud_group.command("rules")
@click.argument("offerwall")
@click.option(
    "--set",
    "changes",
    multiple=True,
    metavar="SIGNAL=ACTION",
    help=f"e.g. hosting_network=refuse; signals: {', '.join(fraud.SIGNALS)}; actions: "
    "refuse (click signals only), hold, allow. Repeat for more.",
)
@click.option(
    "--review-postbacks/--no-review-postbacks",
    default=None,
    help="Whether held and rejected conversions send postbacks (status=pending, rejected).",
)
def fraud_rules(offerwall: str, changes: tuple[str, ...], review_postbacks: bool | None) -> None:
    """Show or change what each risk signal does at OFFERWALL (id or owid)."""
    policy = fraud.Policy.from_settings(get_settings())
    wanted: dict[str, str] = {}
    for change in changes:
        signal, _, action = change.partition("=")
        if not action:
            raise click.UsageError(f"Write --set as SIGNAL=ACTION, not {change!r}.")
        wanted[signal.strip()] = action.strip()

    def rules_of(session: Any, offerwall_id: str) -> OfferwallRules:
        for rules in offerwall_rules(session=session, policy=policy):
            if rules.id == offerwall_id:
                return rules
        raise fraud.FraudRuleError("The offerwall is not approved yet.")

    def apply(session: Any) -> dict[str, Any]:
        ow = offerwalls.get_offerwall(session=session, ref=offerwall)
        now = rules_of(session, ow.id)
        if wanted or review_postbacks is not None:
            set_offerwall_rules(
                session=session,
                offerwall_id=ow.id,
                actions={**now.actions, **wanted},
                review_postbacks=(
                    now.review_postbacks if review_postbacks is None else review_postbacks
                ),
                policy=policy,
            )
            now = rules_of(session, ow.id)
        return _rules_json(now)

    _print_json(_write(apply))


def _block_json(row: blocklist.BlockRow) -> dict[str, Any]:
    return {**row.__dict__, "created_at": _minute(row.created_at)}


@fraud_group.command("block")
@click.argument("kind", type=click.Choice([k.value for k in BlockKind]))
@click.argument("value")
@click.option("--note", default="", help="Why, for the other staff (at most 300 characters).")
def fraud_block(kind: str, value: str, note: str) -> None:
    """Refuse clicks from an IP address or network, or by a uid (within seconds, in every
    process)."""
    row = _write(
        lambda s: blocklist.block(session=s, kind=kind, value=value, note=note, actor=ACTOR)
    )
    _print_json(_block_json(row))


@fraud_group.command("unblock")
@click.argument("entry_id", type=int)
def fraud_unblock(entry_id: int) -> None:
    """Remove blocklist entry ENTRY_ID (see `questwall fraud blocklist`)."""
    _write(lambda s: blocklist.unblock(session=s, entry_id=entry_id))
    _print_json({"removed": entry_id})


@fraud_group.command("blocklist")
def fraud_blocklist() -> None:
    """List the blocklist, newest first."""
    _require_ready()
    with new_session() as session:
        _print_json([_block_json(row) for row in blocklist.blocklist(session=session)])
