"""GET /missions/{id} and GET /quests/{id}: tracking links, answered for a browser."""

from __future__ import annotations

import html

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from api.core.db import write_connection
from api.core.net import client_ip, parse_networks
from api.deps import EngineDep, SettingsDep
from api.routes.blocking import run_db
from api.services.geo import CountryLookup
from api.services.tracking import ClickIn, TrackingRefusal, track_click
from models.schemas import NUL
from models.types import utcnow

router = APIRouter(tags=["tracking links"])

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Questwall</title>
<style>body{{font-family:system-ui,sans-serif;background:#f7f7fb;color:#1c1c28;display:grid;place-items:center;min-height:100vh;margin:0}}
main{{max-width:28rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002;text-align:center}}
h1{{font-size:1.4rem;margin:0 0 .5rem}}p{{margin:0;color:#555}}</style></head>
<body><main><h1>{title}</h1><p>{message}</p></main></body></html>"""


def refusal_page(refusal: TrackingRefusal) -> HTMLResponse:
    body = _PAGE.format(title=html.escape(refusal.title), message=html.escape(refusal.message))
    return HTMLResponse(body, status_code=refusal.status, headers={"Cache-Control": "no-store"})


def check_link_text(click: ClickIn) -> None:
    """Refuse a link whose text no database can store or look up: a NUL character (`%00`)
    in the offer id or a parameter. Checked here, before any database work."""
    texts = (click.offer_id, click.owid, click.uid, click.clickid, *click.subs, click.user_agent)
    if any(text is not None and NUL in text for text in texts):
        raise TrackingRefusal(
            400, "Invalid link", "This link contains a character that is not allowed (NUL)."
        )


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
    )
    countries: CountryLookup = request.app.state.countries

    def work() -> str:
        with write_connection(engine) as db:
            return track_click(db, click=click, countries=countries, now=utcnow()).redirect_url

    try:
        check_link_text(click)
        url = await run_db(engine, work)
    except TrackingRefusal as refusal:
        return refusal_page(refusal)
    return RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})


_QUERY_DOC = (
    "Query: `owid` (prefilled), `uid` and/or `clickid` (at least one), `platform_sub1..3`. "
    "Answers 302 to the offer's destination with `platformid` added, or a small HTML page: "
    "404 unknown offer or offerwall, 400 no uid/clickid, 410 inactive, expired or capped, "
    "403 outside the offer's country or OS targeting."
)


@router.get(
    "/missions/{mission_id}",
    summary="Mission tracking link",
    description=_QUERY_DOC,
    response_class=HTMLResponse,
)
async def mission_link(
    request: Request, mission_id: str, engine: EngineDep, settings: SettingsDep
) -> Response:
    return await _track(request, engine, settings, "mission", mission_id)


@router.get(
    "/quests/{quest_id}",
    summary="Quest tracking link",
    description=_QUERY_DOC,
    response_class=HTMLResponse,
)
async def quest_link(
    request: Request, quest_id: str, engine: EngineDep, settings: SettingsDep
) -> Response:
    return await _track(request, engine, settings, "quest", quest_id)
