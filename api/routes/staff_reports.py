"""GET /staff/reports/margin: staff's margin report, with the portal's session cookie."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from api.accounts import SESSION_COOKIE
from api.core.db import new_session
from api.deps import EngineDep
from api.reports import MAX_DAYS, csv_export, margin, margin_api
from api.routes.blocking import run_db
from api.routes.docs import error_responses

router = APIRouter(tags=["staff"])

MARGIN_PATH = "/staff/reports/margin"

MARGIN_DESCRIPTION = (
    "Staff only. Revenue (what games pay), payout (what publishers are paid) and margin "
    "(revenue − payout; `marginPercent` its share of revenue, null without revenue) of "
    "the approved and held conversions, grouped `by` day, game, mission, offerwall or "
    "country, over inclusive UTC days; per day every day of the range, zeros included. "
    "Rejected, reversed and test conversions are left out; a conversion without revenue "
    "counts as revenue 0. `totals` is the exact sum of the rows (the `…Micros` fields are "
    "integers in millionths of a USD). `format=csv` answers the portal's CSV download "
    "instead. Authenticated by the portal's session cookie (`questwall_session`, set by "
    "signing in to the portal as staff): open it from a signed-in staff browser, or send "
    "that cookie."
)

_DESCRIBED = {
    400: "`invalid_parameter`: a date, the range, `by` or `format` is not valid; "
    "`details[0].path` names the parameter.",
    401: "`not_signed_in`: no open portal session in the `questwall_session` cookie.",
    403: "`staff_only`: the session's account is not staff.",
}


class MarginFigures(BaseModel):
    conversions: int = Field(description="Approved and held conversions.")
    held: int = Field(description="Of them, held for review (pending).")
    revenueUsd: float
    payoutUsd: float
    marginUsd: float = Field(description="Revenue minus payout.")
    marginPercent: float | None = Field(
        description="Margin as a percentage of revenue, to one decimal; null without revenue."
    )
    revenueMicros: int
    payoutMicros: int
    marginMicros: int


class MarginRowOut(MarginFigures):
    key: str = Field(
        description="The day (YYYY-MM-DD), game id, mission id, offerwall id or country "
        "code (`??`: unknown)."
    )
    label: str = Field(description="The key as the portal names it.")


class MarginResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    statusCode: int = 200
    message: str = "OK"
    from_: str = Field(alias="from")
    to: str
    by: str
    total: int
    data: list[MarginRowOut]
    totals: MarginFigures


@router.get(
    MARGIN_PATH,
    summary="Staff: revenue, payout and margin",
    description=MARGIN_DESCRIPTION,
    responses={
        200: {
            "model": MarginResponse,
            "description": "The report's rows and totals.",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **error_responses(400, 401, 403, 503, described=_DESCRIBED),
    },
)
async def staff_margin(
    request: Request,
    engine: EngineDep,
    start: Annotated[
        str | None,
        Query(
            alias="from",
            description="The first UTC day, YYYY-MM-DD (default: 29 days before `to`). "
            f"A range covers at most {MAX_DAYS} days.",
        ),
    ] = None,
    end: Annotated[
        str | None,
        Query(alias="to", description="The last UTC day, YYYY-MM-DD (default: today)."),
    ] = None,
    by: Annotated[
        str | None, Query(description=f"One of {', '.join(margin.BY)} (default day).")
    ] = None,
    output: Annotated[
        str | None, Query(alias="format", description="json (default) or csv.")
    ] = None,
) -> Response:
    token = request.cookies.get(SESSION_COOKIE, "")

    def work() -> Response:
        account = margin_api.staff_account(engine=engine, token=token)
        query = margin_api.parse_query(start=start, end=end, by=by, output=output)
        with new_session(engine) as session:
            report = margin.build_margin(
                session=session, account=account, by=query.by, first=query.first, last=query.last
            )
        if query.format == "csv":
            name = f"questwall-margin-{query.by}-{query.first}-{query.last}.csv"
            return Response(
                csv_export.margin_csv(report),
                media_type="text/csv; charset=utf-8",
                headers={"Content-Disposition": f'attachment; filename="{name}"'},
            )
        return Response(orjson.dumps(margin_api.margin_page(report)), media_type="application/json")

    return await run_db(engine, work)
