"""`questwall offerwall …`: each step calls the offerwall lifecycle in `api/publishers/offerwalls.py`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from api.cli.common import _print_json, _require_ready
from api.core.config import get_settings
from api.core.crypto import get_secret_box
from api.core.db import write_session
from api.postbacks import endpoint as endpoints
from api.publishers import offerwalls, wall_settings
from api.worker import alert_sender, mail_sender


@click.group("offerwall")
def offerwall_group() -> None:
    """Create, approve, reject, suspend, reinstate and configure offerwalls; resume paused
    postbacks."""


def _offerwall_json(ow: Any) -> dict[str, Any]:
    return {
        "id": ow.id,
        "name": ow.name,
        "status": ow.status,
        "owid": ow.owid,
        "rejectionReason": ow.rejection_reason,
        "currency": {
            "name": ow.currency_name,
            "code": ow.currency_code,
            "exchangeRate": ow.exchange_rate,
            "decimals": ow.currency_decimals,
        },
        "postbackUrl": ow.postback_url,
        "reversalUrl": ow.reversal_url,
        "deliveriesPausedAt": (
            ow.deliveries_paused_at.isoformat() if ow.deliveries_paused_at else None
        ),
    }


def _with_offerwall(ref: str, fn: Any) -> Any:
    _require_ready()
    try:
        with write_session() as session:
            ow = offerwalls.get_offerwall(session=session, ref=ref)
            done = fn(session, ow)
    except (offerwalls.OfferwallError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    _send_queued_mail()
    return done


def _send_queued_mail() -> None:
    """Send what the step queued (the publisher's approval or rejection mail) now, when
    SMTP_URL is set; if the server does not answer, `questwall serve` or `worker` retries."""
    sender = mail_sender()
    if sender is not None:
        sender.run_once()


def _change(ref: str, fn: Any) -> None:
    """Apply one step to the offerwall REF and print it as it is afterwards."""
    _print_json(_offerwall_json(_with_offerwall(ref, fn)))


def _issue_key(ref: str, fn: Any) -> None:
    """Apply a step that issues an API key and print it (shown only this once)."""
    issued = _with_offerwall(ref, lambda s, ow: fn(session=s, box=get_secret_box(), offerwall=ow))
    _print_json({"offerwallId": issued.offerwall_id, "owid": issued.owid, "apiKey": issued.api_key})


@offerwall_group.command("create")
@click.argument("name")
def offerwall_create(name: str) -> None:
    """Create a pending offerwall (as a publisher's signup does)."""
    _require_ready()
    with write_session() as session:
        ow = offerwalls.create_offerwall(session=session, name=name)
        _print_json(_offerwall_json(ow))


@offerwall_group.command("approve")
@click.argument("offerwall")
def offerwall_approve(offerwall: str) -> None:
    """Approve a pending or rejected OFFERWALL (id or owid); prints its owid and API key
    (shown only this once). An earlier rejection reason is cleared."""
    _issue_key(offerwall, offerwalls.approve)


@offerwall_group.command("rotate-key")
@click.argument("offerwall")
@click.option(
    "--grace",
    type=click.Choice(list(offerwalls.KEY_GRACE)),
    default="none",
    show_default=True,
    help="How long the old key keeps working: none (for a key that leaked), 1h or 24h.",
)
def offerwall_rotate_key(offerwall: str, grace: str) -> None:
    """Issue a new API key for OFFERWALL and print it (shown only this once). The old key
    keeps working for the grace period, then gets 401; with none it stops at once."""

    def rotate(session: Any, ow: Any) -> tuple[offerwalls.IssuedKey, datetime | None]:
        issued = offerwalls.rotate_key(
            session=session, box=get_secret_box(), offerwall=ow, grace=grace
        )
        return issued, offerwalls.key_grace_until(ow)

    issued, until = _with_offerwall(offerwall, rotate)
    _print_json(
        {
            "offerwallId": issued.offerwall_id,
            "owid": issued.owid,
            "apiKey": issued.api_key,
            "previousKeyValidUntil": until.isoformat() if until else None,
        }
    )


@offerwall_group.command("resume")
@click.argument("offerwall")
def offerwall_resume(offerwall: str) -> None:
    """Resume the paused postbacks of OFFERWALL: what waited goes out in the order it was
    made, POSTBACK_RESUME_RATE a second, rendered from the postback URL saved now (fix it
    with set-postback first)."""
    settings = get_settings()
    released, notice = _with_offerwall(
        offerwall, lambda s, ow: endpoints.resume(session=s, offerwall=ow, settings=settings)
    )
    endpoints.announce([notice])
    sender = alert_sender()
    if sender is not None:  # post the alert now; `serve` or `worker` retries it if need be
        sender.run_once()
    _print_json({"offerwallId": notice.offerwall_id, "owid": notice.owid, "released": released})


@offerwall_group.command("reject")
@click.argument("offerwall")
@click.option(
    "--reason",
    required=True,
    help="Why, in words the publisher reads on their application page (3 to 1000 characters).",
)
def offerwall_reject(offerwall: str, reason: str) -> None:
    """Reject a pending OFFERWALL with a reason."""
    _change(offerwall, lambda s, ow: offerwalls.reject(session=s, offerwall=ow, reason=reason))


@offerwall_group.command("suspend")
@click.argument("offerwall")
def offerwall_suspend(offerwall: str) -> None:
    """Suspend an approved OFFERWALL: its API key and tracking links stop working at once."""
    _change(offerwall, lambda s, ow: offerwalls.suspend(session=s, offerwall=ow))


@offerwall_group.command("reinstate")
@click.argument("offerwall")
def offerwall_reinstate(offerwall: str) -> None:
    """Approve a suspended OFFERWALL again, with the owid and API key it had."""
    _change(offerwall, lambda s, ow: offerwalls.reinstate(session=s, offerwall=ow))


@offerwall_group.command("set-postback")
@click.argument("offerwall")
@click.argument("url")
@click.option(
    "--reversal-url",
    help="Where reversal postbacks go (macros such as {reason}); an empty value sends them "
    "to URL. Left as it is when not given.",
)
def offerwall_set_postback(offerwall: str, url: str, reversal_url: str | None) -> None:
    """Set the postback URL template of OFFERWALL (macros such as {transaction_id}), and
    with --reversal-url the reversal URL, checked as the portal's postback page does."""

    def save(session: Any, ow: Any) -> Any:
        offerwalls.set_postback_url(session=session, offerwall=ow, url=url)
        if reversal_url is not None:
            offerwalls.set_reversal_url(session=session, offerwall=ow, url=reversal_url)
        return ow

    _change(offerwall, save)


@offerwall_group.command("set-currency")
@click.argument("offerwall")
@click.option("--name", required=True, help="e.g. Gems")
@click.option("--code", required=True, help="3 capital letters, e.g. GEM")
@click.option("--rate", required=True, type=float, help="units per USD")
@click.option("--decimals", default=0, show_default=True, type=int)
def offerwall_set_currency(
    offerwall: str, name: str, code: str, rate: float, decimals: int
) -> None:
    """Set the currency payouts are shown and posted back in."""
    _change(
        offerwall,
        lambda s, ow: offerwalls.set_currency(
            session=s, offerwall=ow, name=name, code=code, exchange_rate=rate, decimals=decimals
        ),
    )


@offerwall_group.command("wall")
@click.argument("offerwall")
@click.option(
    "--title", help="The wall's heading, at most 80 characters (empty: the offerwall's name)."
)
@click.option("--logo", "logo_url", help="The logo's https:// address (empty: none).")
@click.option("--accent", help="The accent colour, #rrggbb (or #rgb).")
@click.option(
    "--currency-icon", help="A small icon's https:// address, shown beside payouts (empty: none)."
)
@click.option(
    "--origin",
    "origins",
    multiple=True,
    help="An origin whose pages may frame the wall, e.g. https://games.example.com or "
    "https://*.example.com; repeat it for more. Replaces the list.",
)
@click.option("--no-origins", is_flag=True, help="No page may frame the wall.")
@click.option(
    "--require-signature/--no-require-signature",
    default=None,
    help="Whether wall links must carry sig (HMAC-SHA256 of owid + uid with the API key).",
)
def offerwall_wall(
    offerwall: str,
    title: str | None,
    logo_url: str | None,
    accent: str | None,
    currency_icon: str | None,
    origins: tuple[str, ...],
    no_origins: bool,
    require_signature: bool | None,
) -> None:
    """Show or change the hosted wall of OFFERWALL (id or owid): its theme, the origins
    that may frame it, and whether its links must be signed. What is left out keeps its
    value. Prints the settings and the wall's link."""
    if origins and no_origins:
        raise click.UsageError("--origin and --no-origins contradict each other.")
    base_url = get_settings().base_url

    def change(session: Any, ow: Any) -> dict[str, Any]:
        now = wall_settings.read_settings(ow)
        try:
            wanted = wall_settings.checked_settings(
                title=now.title if title is None else title,
                logo_url=now.logo_url if logo_url is None else logo_url,
                accent=now.accent if accent is None else accent,
                currency_icon=now.currency_icon if currency_icon is None else currency_icon,
                origins=() if no_origins else (origins or now.origins),
                require_signature=(
                    now.require_signature if require_signature is None else require_signature
                ),
            )
        except wall_settings.WallSettingsError as exc:  # every problem, not the first
            raise click.ClickException(" ".join(exc.field_errors().values())) from None
        saved = wall_settings.store(session=session, offerwall=ow, wanted=wanted)
        return {
            "offerwallId": ow.id,
            "owid": ow.owid,
            "title": saved.title,
            "logoUrl": saved.logo_url,
            "accent": saved.accent,
            "currencyIcon": saved.currency_icon,
            "origins": list(saved.origins),
            "requireSignature": saved.require_signature,
            "link": wall_settings.link_for(base_url=base_url, offerwall=ow) or None,
        }

    _print_json(_with_offerwall(offerwall, change))


@offerwall_group.command("list")
def offerwall_list() -> None:
    """List offerwalls (never their API keys)."""
    _require_ready()
    from sqlmodel import select

    from models import Offerwall

    with write_session() as session:
        _print_json([_offerwall_json(ow) for ow in session.exec(select(Offerwall))])
