"""GET /wall: the hosted offerwall a publisher opens in a webview or an iframe.

Server-rendered HTML: it loads fast in a phone's webview, and its Content-Security-Policy
allows nothing but its own inline stylesheet (by nonce), images, and forms back to this
server; while a promotion runs, also the one small inline script (by nonce) that counts
down to its end (without it, the page shows the end's time). `frame-ancestors` names the origins the offerwall configured
(none: the wall cannot be framed at all); a webview opens it as a page of its own.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.core.db import new_session, write_session
from api.core.errors import ApiError
from api.core.geo import CountryLookup, detect_os
from api.core.net import client_ip, parse_networks
from api.core.refusals import N_
from api.deps import BoxDep, EngineDep, SettingsDep
from api.listing import player_progress
from api.publishers import Theme
from api.routes.blocking import run_db
from api.routes.body import read_limited_body
from api.routes.docs import error_responses, html_answer
from api.tickets import report as tickets
from api.wall.i18n import Language, choose, translations
from api.wall.page import (
    MAX_PAGE,
    Visit,
    Wall,
    WallRefusal,
    open_wall,
    read_visit,
    render,
    render_wall,
    wall_view,
)
from models.schemas import NUL
from models.types import utcnow

router = APIRouter(tags=["hosted wall"])

NONE = "'none'"


def content_policy(nonce: str, origins: tuple[str, ...], *, script: bool = False) -> str:
    """The wall's Content-Security-Policy: framed only by the offerwall's origins; a page
    with a promotion's countdown runs its one inline script (by nonce), no other."""
    ancestors = " ".join(origins) if origins else NONE
    return "; ".join(
        (
            f"default-src {NONE}",
            f"style-src 'nonce-{nonce}'",
            *((f"script-src 'nonce-{nonce}'",) if script else ()),
            "img-src https: http: data:",
            "form-action 'self'",
            f"base-uri {NONE}",
            f"frame-ancestors {ancestors}",
        )
    )


def html_page(
    body: str,
    *,
    status: int,
    nonce: str,
    origins: tuple[str, ...] = (),
    script: bool = False,
) -> HTMLResponse:
    headers = {
        "Content-Security-Policy": content_policy(nonce, origins, script=script),
        "Cache-Control": "no-store",
        # The language follows Accept-Language: a shared cache must keep them apart.
        "Vary": "Accept-Language",
    }
    if not origins:
        headers["X-Frame-Options"] = "DENY"
    return HTMLResponse(body, status_code=status, headers=headers)


def refusal_page(refusal: WallRefusal, language: Language) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    theme = Theme(title="Questwall")
    body = render(
        "refusal.html",
        language=language,
        nonce=nonce,
        theme=theme,
        title=refusal.title,
        message=refusal.message,
    )
    return html_page(body, status=refusal.status, nonce=nonce)


def player_place(request: Request, settings: Any) -> tuple[str | None, str | None]:
    """The player's country (from the client IP) and operating system (User-Agent)."""
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104
    ip = client_ip(
        peer, request.headers.get("x-forwarded-for"), parse_networks(settings.trusted_proxies)
    )
    countries: CountryLookup = request.app.state.countries
    return countries.country(ip), detect_os(request.headers.get("user-agent", "")[:1024])


def _page_number(raw: str | None) -> int:
    if raw and raw.isascii() and raw.isdigit() and len(raw) <= 6:
        return min(int(raw), MAX_PAGE)
    return 1


def language_of(request: Request) -> Language:
    lang = request.query_params.get("lang")
    return Language(choose(lang, request.headers.get("accept-language")))


# A wall link's refusal pages (in the player's language), for the OpenAPI document.
LINK_REFUSALS: dict[int | str, dict[str, Any]] = {
    400: html_answer("A missing owid or uid, or a parameter over 255 characters or with a NUL."),
    403: html_answer("A wrong `sig`, or none where the offerwall requires signed links."),
    404: html_answer("An unknown offerwall, or one that is not approved."),
    **error_responses(503),
}


@router.get(
    "/wall",
    summary="Hosted offerwall (HTML)",
    response_class=HTMLResponse,
    description=(
        "The offers one player can do, with their progress, as a page for a webview or an "
        "iframe. Query: `owid`, `uid`, `sig` (hex HMAC-SHA256 of owid + uid with the API "
        "key; required when the offerwall says so), `sub1..3` (passed to the tracking "
        "links as platform_sub1..3), `lang`, `page`. 400 for a missing owid or uid, 403 "
        "for a wrong or missing required `sig`, 404 for an unknown offerwall."
    ),
    responses=LINK_REFUSALS,
)
async def wall(
    request: Request, engine: EngineDep, box: BoxDep, settings: SettingsDep
) -> HTMLResponse:
    language = language_of(request)
    country, os_name = player_place(request, settings)
    page = _page_number(request.query_params.get("page"))

    def work() -> tuple[Wall, str, str, bool]:
        visit = read_visit(dict(request.query_params))
        nonce, now = secrets.token_urlsafe(16), utcnow()
        with engine.connect() as conn:
            found = open_wall(conn, box, visit, now=now)
            view = wall_view(
                conn,
                found,
                visit,
                language=language,
                country=country,
                os_name=os_name,
                page=page,
                now=now,
            )
        body = render_wall(view, nonce=nonce)
        return found, body, nonce, view.promotion is not None

    try:
        found, body, nonce, countdown = await run_db(engine, work)
    except WallRefusal as refusal:
        return refusal_page(refusal, language)
    return html_page(body, status=200, nonce=nonce, origins=found.origins, script=countdown)


# --- "Missing reward?" ----------------------------------------------------------------------

# A report's form is small: a choice and at most MESSAGE_MAX characters.
MAX_FORM_BYTES = 32 * 1024
_REFERENCE = re.compile(r"^[A-Z0-9-]{4,16}$")


@dataclass
class Report:
    """What the player wrote, kept when the form comes back with an error."""

    offer: str = ""
    message: str = ""
    error: str = ""


def _support_page(
    engine: Any, box: Any, visit: Visit, language: Language, report: Report, sent: str
) -> tuple[Wall, str, str]:
    nonce = secrets.token_urlsafe(16)
    with new_session(engine) as session:
        conn = session.connection()
        now = utcnow()
        found = open_wall(conn, box, visit, now=now)
        progress = player_progress(conn, offerwall_id=found.listing.id, uid=visit.uid, now=now)
        mine = tickets.player_tickets(session, offerwall_id=found.listing.id, uid=visit.uid)
    played = [(offer_id, name) for _, offer_id, name, _ in reversed(progress.played())]
    hidden = [(k, v) for k, v in parse_qsl(visit.query()) if k != "page"]
    body = render(
        "support.html",
        language=language,
        nonce=nonce,
        theme=found.theme,
        visit=visit,
        played=played,
        tickets=mine,
        hidden=hidden,
        chosen=report.offer,
        message=report.message,
        error=report.error,
        sent=sent,
        limit=tickets.MESSAGE_MAX,
    )
    return found, body, nonce


@router.get(
    "/wall/support",
    summary="Hosted wall: report a missing reward (HTML)",
    response_class=HTMLResponse,
    description=(
        'The player\'s "Missing reward?" form and their earlier reports with the answers. '
        "Same link parameters as `/wall`."
    ),
    responses=LINK_REFUSALS,
)
async def support(
    request: Request, engine: EngineDep, box: BoxDep, settings: SettingsDep
) -> HTMLResponse:
    language = language_of(request)
    sent = request.query_params.get("sent") or ""
    sent = sent if _REFERENCE.match(sent) else ""

    def work() -> tuple[Wall, str, str]:
        visit = read_visit(dict(request.query_params))
        return _support_page(engine, box, visit, language, Report(), sent)

    try:
        found, body, nonce = await run_db(engine, work)
    except WallRefusal as refusal:
        return refusal_page(refusal, language)
    return html_page(body, status=200, nonce=nonce, origins=found.origins)


def _checked(report: Report, language: Language) -> Report:
    """The form's own checks, in the player's language, before the service's."""
    gettext = translations(language.code).gettext
    text = report.message.strip()
    if not report.offer:
        return replace(report, error=gettext(N_("Choose the offer you did not get paid for.")))
    if NUL in text or NUL in report.offer:
        return replace(
            report, error=gettext(N_("Your message contains a character that is not allowed."))
        )
    if not text:
        return replace(report, error=gettext(N_("Write what happened.")))
    if len(text) > tickets.MESSAGE_MAX:
        return replace(report, error=gettext(N_("Your message is too long.")))
    return report


@router.post(
    "/wall/support",
    summary="Hosted wall: send a missing-reward report",
    response_class=HTMLResponse,
    description=(
        "A form post (`application/x-www-form-urlencoded`) from `/wall/support`: the link's "
        "parameters, `offer` (a mission or quest the player opened) and `message`. Answers "
        "303 back to the form with `sent=<reference>`, or the form again with the error."
    ),
    status_code=303,
    responses={
        303: {"description": "Sent: `Location` is the form with `sent=<reference>`."},
        **LINK_REFUSALS,
        400: html_answer(
            "The form again with the error (no offer chosen, an empty or too long message, "
            "an offer already reported, …), or an invalid link."
        ),
        413: html_answer("A form over 32 KiB."),
    },
)
async def send_report(
    request: Request, engine: EngineDep, box: BoxDep, settings: SettingsDep
) -> Response:
    language = language_of(request)
    try:  # 413 before a larger body is buffered
        raw = await read_limited_body(request, MAX_FORM_BYTES)
    except ApiError:
        too_long = WallRefusal(413, N_("Invalid link"), N_("This report is too long."))
        return refusal_page(too_long, language)
    form = dict(parse_qsl(raw.decode("utf-8", errors="replace"), keep_blank_values=True))
    language = Language(choose(form.get("lang"), request.headers.get("accept-language")))
    report = _checked(Report(form.get("offer", ""), form.get("message", "")), language)

    def work() -> tuple[Wall, str, str] | str:
        visit = read_visit(form)
        checked = report
        if not checked.error:
            with new_session(engine) as session:
                found = open_wall(session.connection(), box, visit, now=utcnow())
            try:
                with write_session(engine) as session:
                    ticket = tickets.open_ticket(
                        session,
                        offerwall_id=found.listing.id,
                        uid=visit.uid,
                        offer_id=checked.offer,
                        message=checked.message,
                    )
                    return f"/wall/support?{visit.query(sent=ticket.reference)}"
            except tickets.TicketError as refused:
                gettext = translations(language.code).gettext
                checked = replace(checked, error=refused.translated(gettext))
        return _support_page(engine, box, visit, language, checked, "")

    try:
        outcome = await run_db(engine, work)
    except WallRefusal as refusal:
        return refusal_page(refusal, language)
    if isinstance(outcome, str):
        return RedirectResponse(outcome, status_code=303, headers={"Cache-Control": "no-store"})
    found, body, nonce = outcome
    return html_page(body, status=400, nonce=nonce, origins=found.origins)
