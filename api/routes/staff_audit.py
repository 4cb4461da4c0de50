"""GET /staff/audit and /staff/audit/export: staff read the audit trail, with the portal's
session cookie (as /staff/reports/margin); every export is recorded as `audit.exported`."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from api import audit
from api.accounts import SESSION_COOKIE, Account, password_fresh
from api.core.db import new_session
from api.core.errors import ApiError
from api.core.net import client_ip, parse_networks
from api.deps import EngineDep
from api.listing import invalid_parameter, whole_number
from api.reports import margin_api
from api.routes.blocking import run_db
from api.routes.docs import error_responses

router = APIRouter(tags=["staff"])

AUDIT_PATH = "/staff/audit"
EXPORT_PATH = "/staff/audit/export"

_AUTH = (
    "Authenticated by the portal's session cookie (`questwall_session`, set by signing in "
    "to the portal as staff): open it from a signed-in staff browser, or send that cookie."
)
AUDIT_DESCRIPTION = (
    "Staff only. The audit trail's events, newest first, narrowed by the filters (each "
    "optional, all of them at once). A page holds `limit` events (default "
    f"{audit.PAGE_LIMIT}, at most {audit.MAX_LIMIT}: a larger one is clamped); `older` is "
    "the `cursor` of the next, older page (null on the last). " + _AUTH
)
EXPORT_DESCRIPTION = (
    "Staff only. Every event the filters match, oldest first, as a download: CSV (one row "
    "per event, `changes` as JSON in its cell) or JSON Lines (one object per line), with "
    "the table's columns. The export itself is recorded in the trail first "
    "(`audit.exported`, with the filters and the row count). Like every sensitive action, "
    "it asks for the password again: the session's password must have been entered in the "
    "last 10 minutes (the Audit log page's Export asks for it when it was not). " + _AUTH
)
_DESCRIBED = {
    400: "`invalid_parameter`: a filter, the cursor, the limit or the format is not valid; "
    "`details[0].path` names the parameter.",
    401: "`not_signed_in`: no open portal session in the `questwall_session` cookie.",
    403: "`staff_only`: the session's account is not staff.",
}
_EXPORT_DESCRIBED = {
    **_DESCRIBED,
    403: "`staff_only`: the session's account is not staff; `password_required`: the "
    "password was not entered in this session in the last 10 minutes (export from the "
    "portal's Audit log, which asks for it).",
}

Actor = Annotated[
    str | None, Query(description="An account's email (any case) or id, or a CLI user.")
]
Action = Annotated[
    str | None,
    Query(
        description="One action (`offerwall.approved`), or a prefix ending in `.` "
        "(`offerwall.`: every action on offerwalls)."
    ),
]
TargetType = Annotated[
    str | None, Query(alias="targetType", description="The target's type (`offerwall`).")
]
TargetId = Annotated[
    str | None, Query(alias="targetId", description="The target's id (needs `targetType`).")
]
ScopeType = Annotated[str | None, Query(alias="scopeType", description="`studio` or `offerwall`.")]
ScopeId = Annotated[
    str | None, Query(alias="scopeId", description="The studio's or offerwall's id.")
]
Since = Annotated[
    str | None,
    Query(description="From this ISO date or time (inclusive; UTC without a zone)."),
]
Until = Annotated[
    str | None,
    Query(description="Before this ISO time; a date alone includes that whole day."),
]


class AuditEventOut(BaseModel):
    id: int
    at: str = Field(description="ISO 8601, UTC.")
    actorKind: str = Field(description="account, cli or system.")
    actorId: str | None
    actorEmail: str | None
    actorRole: str | None
    actorIp: str | None
    userAgent: str | None
    action: str
    targetType: str
    targetId: str
    targetName: str = Field(description="As the target was named then.")
    scopeType: str | None
    scopeId: str | None
    requestId: str | None
    changes: dict[str, Any] = Field(description="{field: [before, after]}; never a secret.")
    previousHash: str
    hash: str


class AuditPage(BaseModel):
    statusCode: int = 200
    message: str = "OK"
    data: list[AuditEventOut]
    older: str | None = Field(description="The cursor of the next, older page; null: none.")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _staff(engine: Any, request: Request) -> Account:
    try:
        return margin_api.staff_account(
            engine=engine, token=request.cookies.get(SESSION_COOKIE, "")
        )
    except ApiError as exc:
        if exc.status == 403:
            raise ApiError(403, "staff_only", "Only staff may read the audit trail.") from None
        raise


def _filters(**text: str | None) -> audit.Filters:
    try:
        return audit.filters(**text)
    except audit.FilterError as exc:
        name = _camel(exc.field or "filter")
        raw = text.get(exc.field or "") or ""
        raise ApiError(
            400, "invalid_parameter", exc.message, [{"path": name, "value": raw[:50]}]
        ) from None


def _actor(request: Request, account: Account) -> audit.Actor:
    settings = request.app.state.settings
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104
    ip = client_ip(
        peer, request.headers.get("x-forwarded-for"), parse_networks(settings.trusted_proxies)
    )
    return audit.account_actor(
        account.id,
        account.email,
        account.role,
        ip=ip,
        user_agent=request.headers.get("user-agent"),
    )


@router.get(
    AUDIT_PATH,
    summary="Staff: the audit trail",
    description=AUDIT_DESCRIPTION,
    response_model=AuditPage,
    responses={
        200: {"description": "A page of events, newest first."},
        **error_responses(400, 401, 403, 503, described=_DESCRIBED),
    },
)
async def staff_audit(
    request: Request,
    engine: EngineDep,
    actor: Actor = None,
    action: Action = None,
    target_type: TargetType = None,
    target_id: TargetId = None,
    scope_type: ScopeType = None,
    scope_id: ScopeId = None,
    since: Since = None,
    until: Until = None,
    cursor: Annotated[
        str | None, Query(description="`older` of the page before (default: the newest).")
    ] = None,
    limit: Annotated[str | None, Query(description="Events per page.")] = None,
) -> Response:
    def work() -> Response:
        _staff(engine, request)
        wanted = _filters(
            actor=actor,
            action=action,
            target_type=target_type,
            target_id=target_id,
            scope_type=scope_type,
            scope_id=scope_id,
            since=since,
            until=until,
        )
        size = whole_number("limit", limit, audit.PAGE_LIMIT)
        before = whole_number("cursor", cursor, 0) if cursor else None
        with new_session(engine) as session:
            page = audit.read_page(session, wanted, before=before, limit=size)
        body = {
            "statusCode": 200,
            "message": "OK",
            "data": [{_camel(k): v for k, v in audit.plain(row).items()} for row in page.rows],
            "older": None if page.older is None else str(page.older),
        }
        return Response(orjson.dumps(body), media_type="application/json")

    return await run_db(engine, work)


@router.get(
    EXPORT_PATH,
    summary="Staff: export the audit trail",
    description=EXPORT_DESCRIPTION,
    responses={
        200: {
            "description": "The file, as an attachment.",
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        },
        **error_responses(400, 401, 403, 503, described=_EXPORT_DESCRIBED),
    },
)
async def staff_audit_export(
    request: Request,
    engine: EngineDep,
    output: Annotated[
        str | None, Query(alias="format", description="csv or jsonl (default jsonl).")
    ] = None,
    actor: Actor = None,
    action: Action = None,
    target_type: TargetType = None,
    target_id: TargetId = None,
    scope_type: ScopeType = None,
    scope_id: ScopeId = None,
    since: Since = None,
    until: Until = None,
) -> Response:
    def work() -> audit.Export:
        account = _staff(engine, request)
        if not password_fresh(account.password_confirmed_at):
            raise ApiError(
                403,
                "password_required",
                "Enter your password again to export the audit trail: export it from the "
                "Audit log page, which asks for it.",
            )
        wanted = _filters(
            actor=actor,
            action=action,
            target_type=target_type,
            target_id=target_id,
            scope_type=scope_type,
            scope_id=scope_id,
            since=since,
            until=until,
        )
        shape = output or "jsonl"
        if shape not in audit.FORMATS:
            raise invalid_parameter("format", shape, f"one of {', '.join(audit.FORMATS)}")
        with audit.acting_as(_actor(request, account)):
            return audit.export(engine, wanted, shape)

    made = await run_db(engine, work)
    return StreamingResponse(
        made.lines,
        media_type=made.media_type,
        headers={"Content-Disposition": f'attachment; filename="{made.filename}"'},
    )
