"""GET /missions/{id} and GET /quests/{id}: tracking links, answered for a browser."""

from __future__ import annotations

import html
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import Engine

from api.core.geo import CountryLookup
from api.core.group_commit import PerLoop
from api.core.net import client_ip, parse_networks
from api.core.refusals import N_
from api.deps import EngineDep, SettingsDep
from api.fraud import Policy
from api.ops import CLICKS, RATE_LIMITED
from api.routes.blocking import run_db
from api.routes.docs import html_answer
from api.tracking import (
    ClickIn,
    ClickScreen,
    ScreenedClick,
    Tracked,
    TrackingRefusal,
    record_click,
    record_clicks_together,
    record_refusal,
)
from api.wall.i18n import Language, choose, translations
from models import RefusalReason
from models.schemas import NUL

# The click screening's refusals that are rate limits, as questwall_rate_limited_total names them.
CLICK_LIMITS = {
    RefusalReason.IP_RATE.value: "clicks_per_ip",
    RefusalReason.UID_RATE.value: "clicks_per_uid",
}

router = APIRouter(tags=["tracking links"])

# Tracking links answer people in browsers: HTML pages, never JSON.
TRACKING_PREFIXES = ("/missions/", "/quests/")

_PAGE = """<!doctype html>
<html lang="{lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Questwall</title>
<style>body{{font-family:system-ui,sans-serif;background:#f7f7fb;color:#1c1c28;display:grid;place-items:center;min-height:100vh;margin:0}}
main{{max-width:28rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002;text-align:center}}
h1{{font-size:1.4rem;margin:0 0 .5rem}}p{{margin:0;color:#555}}</style></head>
<body><main><h1>{title}</h1><p>{message}</p></main></body></html>"""


def page_language(request: Request) -> Language:
    """The language of a tracking link's page: the hosted wall's, which its cards' links
    carry as `lang`; else the best match of Accept-Language, as the wall chooses; else
    English."""
    return Language(
        choose(request.query_params.get("lang"), request.headers.get("accept-language"))
    )


def _page(
    status: int,
    title: str,
    message: str,
    language: Language,
    headers: dict[str, str] | None = None,
):
    body = _PAGE.format(lang=language.code, title=html.escape(title), message=html.escape(message))
    return HTMLResponse(
        body,
        status_code=status,
        headers={"Cache-Control": "no-store", "Vary": "Accept-Language", **(headers or {})},
    )


def refusal_page(refusal: TrackingRefusal, language: Language) -> HTMLResponse:
    """The refusal in the player's language, from the hosted wall's catalogs."""
    gettext = translations(language.code).gettext
    message = refusal.translated(gettext, language.moment)
    return _page(refusal.status, gettext(refusal.title), message, language)


def unavailable_page(headers: dict[str, str], language: Language) -> HTMLResponse:
    """The page for a click that could not be recorded (the database is unreachable)."""
    gettext = translations(language.code).gettext
    return _page(
        503,
        gettext(N_("Please try again")),
        gettext(N_("This offer cannot be opened right now. Please try again in a moment.")),
        language,
        headers,
    )


def check_link_text(click: ClickIn) -> None:
    """Refuse a link whose text no database can store or look up: a NUL character (`%00`)
    in the offer id or a parameter. Checked here, before any database work."""
    texts = (click.offer_id, click.owid, click.uid, click.clickid, *click.subs, click.user_agent)
    if any(text is not None and NUL in text for text in texts):
        raise TrackingRefusal(
            RefusalReason.INVALID_LINK,
            400,
            N_("Invalid link"),
            N_("This link contains a character that is not allowed (NUL)."),
        )


# SQLite: the clicks that arrive while the event loop is busy share one transaction.
_GROUPS: PerLoop[ScreenedClick, Tracked] = PerLoop()


async def _record_grouped(
    engine: Engine, countries: CountryLookup, policy: Policy, screened: ScreenedClick
) -> str:
    """The click written on the event loop with the others waiting for it, in one
    transaction and one commit (a commit was a third of a click's cost on SQLite)."""
    together = partial(record_clicks_together, engine, countries, policy)
    tracked = await _GROUPS.get((engine, id(countries), id(policy)), together).submit(screened)
    return tracked.redirect_url


async def _track(
    request: Request, engine: EngineDep, settings: SettingsDep, kind: str, offer_id: str
) -> Response:
    q = request.query_params
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104
    click = ClickIn(
        kind=kind,
        offer_id=offer_id,
        owid=q.get("owid"),
        uid=q.get("uid"),
        clickid=q.get("clickid"),
        subs=(q.get("platform_sub1"), q.get("platform_sub2"), q.get("platform_sub3")),
        ip=client_ip(
            peer, request.headers.get("x-forwarded-for"), parse_networks(settings.trusted_proxies)
        ),
        user_agent=request.headers.get("user-agent", ""),
        accept_language=request.headers.get("accept-language", ""),
        platform=request.headers.get("sec-ch-ua-platform", ""),
    )
    countries: CountryLookup = request.app.state.countries
    screen: ClickScreen = request.app.state.click_screen
    policy: Policy = request.app.state.fraud_policy

    def work() -> str:
        # In the database's worker thread on PostgreSQL: the screening's Redis round trips
        # then never hold the event loop.
        signals = screen.check(click)
        tracked = record_click(
            engine=engine, click=click, countries=countries, signals=signals, policy=policy
        )
        return tracked.redirect_url

    try:
        check_link_text(click)
        if engine.dialect.name == "sqlite":
            screened = ScreenedClick(click, tuple(screen.check(click)))
            url = await _record_grouped(engine, countries, policy, screened)
        else:
            url = await run_db(engine, work)
    except TrackingRefusal as refusal:
        remember = partial(
            record_refusal, engine=engine, click=click, reason=refusal.reason, countries=countries
        )
        await run_db(engine, remember)
        reason = str(refusal.reason.value)
        CLICKS.labels(outcome=reason).inc()
        if reason in CLICK_LIMITS:
            RATE_LIMITED.labels(limit=CLICK_LIMITS[reason]).inc()
        return refusal_page(refusal, page_language(request))
    CLICKS.labels(outcome="redirected").inc()
    return RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})


_QUERY_DOC = (
    "Opened by the player's browser. Query: `owid` (prefilled), `uid` and/or `clickid` (at "
    "least one), `platform_sub1..3`, `lang`. Answers 302 to the offer's destination with "
    "`platformid` added, or a small HTML page explaining the refusal, in the language `lang` "
    "names (the hosted wall's cards carry the wall's), else Accept-Language's, else English."
)


# The answers of a tracking link, for the OpenAPI document (see docs.drop_unreachable_answers).
TRACKING_RESPONSES: dict[int | str, dict[str, Any]] = {
    302: {
        "description": "The click is recorded: redirect to the offer's destination URL with "
        "`platformid=<platform user id>` added to its query.",
        "headers": {"Location": {"schema": {"type": "string"}, "description": "Destination"}},
    },
    400: html_answer("Neither `uid` nor `clickid` was given, or a parameter is invalid."),
    403: html_answer(
        "The player's country or operating system is outside the offer's targeting, or the "
        "click screening refused the click (a blocked network, a script's User-Agent, or too "
        "many clicks a minute from the address or by the player)."
    ),
    404: html_answer("Unknown offer, or unknown or unapproved offerwall (`owid`)."),
    410: html_answer("The offer is inactive, expired or capped."),
    503: html_answer("The click could not be recorded right now; try again (see `Retry-After`)."),
}
_OWID = {"name": "owid", "description": "The offerwall id.", "required": True}
_PARAMS: list[dict[str, Any]] = [
    {**_OWID, "in": "query", "schema": {"type": "string", "minLength": 1}},
    *(
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": text,
            "schema": {"type": "string", "minLength": 1},
        }
        for name, text in (
            ("uid", "The publisher's user id (at least one of uid and clickid)."),
            ("clickid", "The publisher's click id (at least one of uid and clickid)."),
            ("platform_sub1", "Free value, returned in the postback."),
            ("platform_sub2", "Free value, returned in the postback."),
            ("platform_sub3", "Free value, returned in the postback."),
            ("lang", "The language of a refusal's page (`de`); else Accept-Language's."),
        )
    ),
]
_ROUTE_DOC: dict[str, Any] = {
    "description": _QUERY_DOC,
    "response_class": HTMLResponse,
    "status_code": 302,
    "responses": TRACKING_RESPONSES,
    "openapi_extra": {"parameters": _PARAMS},
}


@router.get("/missions/{mission_id}", summary="Mission tracking link", **_ROUTE_DOC)
async def mission_link(
    request: Request, mission_id: str, engine: EngineDep, settings: SettingsDep
) -> Response:
    return await _track(request, engine, settings, "mission", mission_id)


@router.get("/quests/{quest_id}", summary="Quest tracking link", **_ROUTE_DOC)
async def quest_link(
    request: Request, quest_id: str, engine: EngineDep, settings: SettingsDep
) -> Response:
    return await _track(request, engine, settings, "quest", quest_id)
