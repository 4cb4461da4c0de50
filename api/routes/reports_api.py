"""GET /offerwall/reports: a publisher's reports with their API key."""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Header, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from api.core.db import new_session
from api.core.errors import ApiError
from api.deps import BoxDep, EngineDep, ReportsLimiterDep
from api.ops import RATE_LIMITED
from api.reports import DEFAULT_LIMIT, GROUP_BY, MAX_DAYS, MAX_LIMIT, MAX_OFFSET, reporting_api
from api.routes.blocking import run_db
from api.routes.docs import API_KEY_DESCRIBED, error_responses

router = APIRouter(tags=["offerwall"])

# The OpenAPI description; the rules themselves are in docs/contract.md#reporting-api.
REPORTS_DESCRIPTION = (
    "Clicks, conversions, conversion rate, EPC, payout, reversed conversions and payout, "
    "and net payout of the offerwall, grouped by `groupBy`, over inclusive UTC days: the "
    "figures of the portal's reports page. Amounts are JSON numbers: `payout`, `epc`, "
    "`reversedPayout` and `netPayout` in the offerwall's currency (each conversion's USD "
    "payout × the exchange rate, rounded half-up to its decimals as in postbacks, then "
    "added up; EPC to at least 2 decimals), the `…Usd` fields in US dollars. "
    "`conversionRate` is a percentage to one decimal; it and the EPCs are null without "
    "clicks. `currencyGiven` is your currency given to players with your promotions' "
    "multipliers, `currencyGivenWithoutPromotions` the same without them, and "
    "`promotedConversions` counts the conversions a promotion multiplied. "
    "A conversion and its reversal count on the conversion's day. Rows come in the "
    "portal's order (per day by date, otherwise by payout, largest first); `total` counts "
    "them and `totals` sums all of them, not only the page. Over the offerwall's rate "
    "(`QUESTWALL_REPORTS_RATE` a minute) the answer is 429 with `Retry-After`."
)

_DESCRIBED = {
    **API_KEY_DESCRIBED,
    400: "`invalid_parameter`: a date, the range, `groupBy`, `limit` or `offset` is not "
    "valid; `details[0].path` names the parameter.",
    429: "`rate_limited`: too many reports for this offerwall; see `Retry-After`.",
}


class ReportCurrency(BaseModel):
    code: str
    name: str
    exchangeRate: float
    decimals: int


class ReportFigures(BaseModel):
    clicks: int
    conversions: int = Field(description="Approved, those reversed since included.")
    conversionRate: float | None = Field(description="Conversions per click, in percent.")
    epc: float | None = Field(description="Payout per click, in the offerwall's currency.")
    payout: float
    reversed: int = Field(description="Conversions reversed since.")
    reversedPayout: float
    netPayout: float = Field(description="Payout minus reversed payout.")
    epcUsd: float | None
    payoutUsd: float
    reversedPayoutUsd: float
    netPayoutUsd: float
    refusedClicks: int = Field(
        description="Clicks your tracking links refused (targeting, a cap, fraud "
        "screening); not among `clicks`."
    )
    currencyGiven: float = Field(
        description="Your currency given to players for these conversions, each with its "
        "promotion's multiplier (rounded per conversion as `payout` is)."
    )
    currencyGivenWithoutPromotions: float = Field(
        description="The same without promotions: equal to `payout`."
    )
    promotedConversions: int = Field(description="Conversions a promotion multiplied.")


class ReportRowOut(ReportFigures):
    key: str = Field(
        description="The day (YYYY-MM-DD), offer id, country code (`??`: unknown), "
        "operating system or sub value (an empty string: none)."
    )
    label: str = Field(description="The key as the portal names it.")


class ReportsResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    statusCode: int = 200
    message: str = "OK"
    from_: str = Field(alias="from")
    to: str
    groupBy: str
    currency: ReportCurrency
    total: int
    offset: int
    limit: int
    data: list[ReportRowOut]
    totals: ReportFigures


@router.get(
    "/offerwall/reports",
    summary="The offerwall's report: clicks, conversions, EPC and payout",
    description=REPORTS_DESCRIPTION,
    responses={
        200: {"model": ReportsResponse, "description": "One page of the report's rows."},
        **error_responses(400, 401, 403, 429, 503, described=_DESCRIBED),
    },
)
async def offerwall_reports(
    engine: EngineDep,
    box: BoxDep,
    limiter: ReportsLimiterDep,
    x_api_key: Annotated[str | None, Header(description="The offerwall's API key.")] = None,
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
    group_by: Annotated[
        str | None,
        Query(alias="groupBy", description=f"One of {', '.join(GROUP_BY)} (default day)."),
    ] = None,
    limit: Annotated[
        str | None,
        Query(
            description=f"Rows per page, 0-{MAX_LIMIT} (default {DEFAULT_LIMIT}); larger "
            "is clamped."
        ),
    ] = None,
    offset: Annotated[
        str | None, Query(description=f"Rows to skip, 0-{MAX_OFFSET} (default 0).")
    ] = None,
) -> Response:
    query = reporting_api.parse_query(
        start=start, end=end, group_by=group_by, limit=limit, offset=offset
    )

    def work() -> bytes:
        with new_session(engine) as session:
            offerwall_id = reporting_api.approved_offerwall_id(
                session=session, box=box, api_key=x_api_key
            )
            try:
                limiter.check(offerwall_id)
            except ApiError:
                RATE_LIMITED.labels(limit="reports").inc()
                raise
            page = reporting_api.report_page(
                session=session, offerwall_id=offerwall_id, query=query
            )
        return orjson.dumps(page)

    return Response(await run_db(engine, work), media_type="application/json")
