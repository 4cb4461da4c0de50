"""The portal's session over plain HTTP: sign-in (and its second step, a code, for an
account with two-factor sign-in), publisher signup, sign-out, and the forgotten password
(ask for a reset link, set the new password with it).

After a right password, an account with two-factor sign-in gets no session but a
short-lived challenge in an HttpOnly cookie (`CHALLENGE_COOKIE`, only sent to /auth), and
the page goes to the code's page; the session is opened when the code is right.

The session token lives in an HttpOnly, SameSite=Lax cookie (Secure when `BASE_URL` is
https) that these routes set and delete; no script on the page can read it. The
portal's states read it from the websocket's handshake (portal/state/auth.py), which
is why the page loads anew after signing in or out.

Cross-site requests: SameSite=Lax keeps the cookie off cross-site POSTs, and every
route here also refuses a request whose `Origin` is not the portal's own.
"""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import quote, urlsplit

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from api.accounts import (
    SESSION_COOKIE,
    SESSION_MAX,
    AccountError,
    ChallengeEnded,
    Client,
    IpThrottle,
    LoginThrottled,
    ResetThrottled,
    forgot_password,
    reset_password,
    reset_throttle,
    sign_in,
    sign_in_with_code,
    sign_out,
)
from api.accounts.challenge import LIFETIME
from api.core.config import Settings
from api.core.db import write_session
from api.core.errors import ApiError, error_body, json_object, validation_failed
from api.core.net import client_ip, parse_networks
from api.core.refusals import NUL_MESSAGE
from api.ops import RATE_LIMITED
from api.publishers import signup_publisher
from api.responses import OrjsonResponse
from api.routes.body import read_limited_body
from portal import routes

MAX_BODY = 16 * 1024
SIGN_IN_FIELDS = frozenset({"email", "password", "next"})
CODE_FIELDS = frozenset({"code", "next"})
CHALLENGE_COOKIE = "questwall_sign_in"
# The page's script posts `next` with every form; signup goes to the application page.
SIGN_UP_FIELDS = frozenset(
    {"company", "website", "contact", "email", "password", "confirm", "next"}
)
FORGOT_FIELDS = frozenset({"email", "next"})
RESET_FIELDS = frozenset({"token", "password", "confirm", "next"})

router = APIRouter(prefix=routes.AUTH, include_in_schema=False)


def session_token(cookie_header: str) -> str:
    """The session token in a `Cookie` header ('' when there is none)."""
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(cookie_header or "")
    except CookieError:
        return ""
    morsel = cookies.get(SESSION_COOKIE)
    return morsel.value if morsel else ""


def add_session_routes(app: FastAPI) -> None:
    """Mount the routes on the app `create_api()` built (it holds engine, box, settings)."""
    settings = app.state.settings
    app.state.ip_throttle = IpThrottle(settings.redis_url, key_prefix=settings.redis_key_prefix)
    app.state.reset_throttle = reset_throttle(
        settings.redis_url, key_prefix=settings.redis_key_prefix
    )
    app.include_router(router)

    async def _not_found(request: Request) -> OrjsonResponse:
        return OrjsonResponse(
            error_body(404, "not_found", f"No endpoint at {request.url.path}."), status_code=404
        )

    app.add_api_route(
        routes.AUTH + "/{rest:path}",
        _not_found,
        methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
        include_in_schema=False,
    )


@router.post("/sign-in")
async def sign_in_route(request: Request) -> Response:
    settings = _checked_origin(request)
    data = await _form(request, SIGN_IN_FIELDS)
    return await _sign_in(request, settings, data, next_path=data["next"])


async def _sign_in(
    request: Request, settings: Settings, data: dict[str, Any], *, next_path: str
) -> Response:
    """Check the throttles and the password; on success set the cookie and answer where
    the page goes next (`next_path` if it is a path of this site, else the role's home)."""
    client = _client(request, settings)
    try:
        signed = await run_in_threadpool(
            sign_in,
            engine=request.app.state.engine,
            box=request.app.state.box,
            email=data["email"],
            password=data["password"],
            client_ip=client.ip or "",
            ip_throttle=request.app.state.ip_throttle,
            user_agent=client.user_agent or "",
            country=client.country,
        )
    except LoginThrottled as exc:
        raise _rate_limited(exc.retry_after, str(exc)) from None
    except AccountError as exc:
        raise ApiError(401, "invalid_credentials", str(exc)) from None
    location = routes.safe_next(next_path, routes.home_for(signed.role))
    if signed.challenge:
        response = _go(f"{routes.LOGIN_CODE}?next={quote(location, safe='/')}")
        response.set_cookie(
            CHALLENGE_COOKIE,
            signed.challenge,
            max_age=int(LIFETIME.total_seconds()),
            path=routes.AUTH,
            **_cookie_flags(settings),
        )
        return response
    return _signed_in(settings, signed.token, location)


@router.post("/sign-in/code")
async def sign_in_code_route(request: Request) -> Response:
    """The second step: the code from the app, or a recovery code; opens the session."""
    settings = _checked_origin(request)
    data = await _form(request, CODE_FIELDS)
    client = _client(request, settings)
    try:
        signed = await run_in_threadpool(
            sign_in_with_code,
            engine=request.app.state.engine,
            box=request.app.state.box,
            challenge_token=request.cookies.get(CHALLENGE_COOKIE, ""),
            code=data["code"],
            client_ip=client.ip or "",
            ip_throttle=request.app.state.ip_throttle,
            user_agent=client.user_agent or "",
            country=client.country,
        )
    except LoginThrottled as exc:
        raise _rate_limited(exc.retry_after, str(exc)) from None
    except ChallengeEnded as exc:
        raise ApiError(401, "sign_in_expired", str(exc)) from None
    except AccountError as exc:
        raise ApiError(401, "invalid_code", str(exc)) from None
    location = routes.safe_next(data["next"], routes.home_for(signed.role))
    response = _signed_in(settings, signed.token, location)
    response.delete_cookie(CHALLENGE_COOKIE, path=routes.AUTH, **_cookie_flags(settings))
    return response


@router.post("/sign-up")
async def sign_up_route(request: Request) -> Response:
    """A publisher's application, then a sign-in from the same request."""
    settings = _checked_origin(request)
    data = await _form(request, SIGN_UP_FIELDS)
    client = _client(request, settings)

    def work() -> None:
        with write_session(request.app.state.engine) as session:
            signup_publisher(
                session=session,
                client=client,
                **{k: data[k] for k in SIGN_UP_FIELDS - {"next"}},
            )

    try:
        await run_in_threadpool(work)
    except AccountError as exc:
        raise _field_errors(exc) from None
    return await _sign_in(request, settings, data, next_path=routes.APPLICATION)


@router.post("/forgot-password")
async def forgot_password_route(request: Request) -> Response:
    """Mail a reset link: the same answer whether the address has an account or not."""
    settings = _checked_origin(request)
    data = await _form(request, FORGOT_FIELDS)
    try:
        await run_in_threadpool(
            forgot_password,
            engine=request.app.state.engine,
            email=data["email"],
            client_ip=_client_ip(request, settings),
            ip_throttle=request.app.state.reset_throttle,
            user_agent=request.headers.get("user-agent", ""),
        )
    except ResetThrottled as exc:
        raise _rate_limited(exc.retry_after, str(exc)) from None
    except AccountError as exc:
        raise _field_errors(exc) from None
    return _go(routes.FORGOT_PAGE + "?sent=1")


@router.post("/reset-password")
async def reset_password_route(request: Request) -> Response:
    """Set a new password with a reset link's token; every session of the account ends."""
    settings = _checked_origin(request)
    data = await _form(request, RESET_FIELDS)
    client = _client(request, settings)

    def work() -> None:
        with write_session(request.app.state.engine) as session:
            reset_password(
                session=session,
                box=request.app.state.box,
                token=data["token"],
                password=data["password"],
                confirm=data["confirm"],
                client=client,
            )

    try:
        await run_in_threadpool(work)
    except AccountError as exc:
        raise _field_errors(exc) from None
    response = _go(routes.LOGIN + "?reset=1")
    response.delete_cookie(SESSION_COOKIE, path="/", **_cookie_flags(request.app.state.settings))
    return response


@router.post("/sign-out")
async def sign_out_route(request: Request) -> Response:
    settings = _checked_origin(request)
    token = request.cookies.get(SESSION_COOKIE, "")
    client = _client(request, settings)
    await run_in_threadpool(
        sign_out,
        engine=request.app.state.engine,
        token=token,
        ip=client.ip,
        user_agent=client.user_agent,
    )
    response = OrjsonResponse({"statusCode": 200, "message": "OK", "location": routes.LOGIN})
    response.delete_cookie(SESSION_COOKIE, path="/", **_cookie_flags(settings))
    return response


# --- helpers ----------------------------------------------------------------------


def _checked_origin(request: Request) -> Settings:
    """Refuse a request from another site (403 `origin_not_allowed`)."""
    settings: Settings = request.app.state.settings
    if request.headers.get("origin") not in allowed_origins(settings.base_url):
        raise ApiError(403, "origin_not_allowed", "This request must come from the portal.")
    return settings


def allowed_origins(base_url: str) -> set[str]:
    """`BASE_URL`'s origin, and for localhost its 127.0.0.1 twin (as rxconfig.py allows)."""
    parts = urlsplit(base_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.hostname == "localhost":
        return {origin, origin.replace("//localhost", "//127.0.0.1", 1)}
    return {origin}


async def _form(request: Request, fields: frozenset[str]) -> dict[str, Any]:
    """The JSON body's string fields; 422 `validation_failed` names any wrong one."""
    data, problems = json_object(await read_limited_body(request, MAX_BODY), known=fields)
    problems += [
        {"path": name, "message": "expected a string"}
        for name in sorted(fields)
        if not isinstance(data.setdefault(name, ""), str)
    ]
    problems += [
        {"path": name, "message": NUL_MESSAGE}
        for name in sorted(fields)
        if isinstance(data[name], str) and "\x00" in data[name]
    ]
    if problems:
        raise validation_failed("The request is invalid.", problems)
    return data


def _rate_limited(retry_after: int, message: str) -> ApiError:
    """429 `rate_limited`, with the seconds to wait in `Retry-After`."""
    RATE_LIMITED.labels(limit="sign_in").inc()
    return ApiError(429, "rate_limited", message, headers={"Retry-After": str(retry_after)})


def _field_errors(exc: AccountError) -> ApiError:
    """422 naming every input the service refused (or none: a refusal of the form)."""
    details = [{"path": f, "message": m} for f, m in exc.field_errors().items()]
    return validation_failed(exc.message, details)


def _client_ip(request: Request, settings: Settings) -> str:
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104
    forwarded = request.headers.get("x-forwarded-for")
    return client_ip(peer, forwarded, parse_networks(settings.trusted_proxies))


def _client(request: Request, settings: Settings) -> Client:
    """Where the request comes from: its IP, User-Agent and the IP's country."""
    ip = _client_ip(request, settings)
    try:
        country = request.app.state.countries.country(ip)
    except (ValueError, AttributeError):  # not an address the database knows
        country = None
    agent = request.headers.get("user-agent", "")[:512] or None
    return Client(ip, agent, country if country and len(country) == 2 else None)


def _cookie_flags(settings: Settings) -> dict[str, Any]:
    return {
        "httponly": True,
        "samesite": "lax",
        "secure": settings.base_url.startswith("https://"),
    }


def _go(location: str) -> Response:
    return OrjsonResponse({"statusCode": 200, "message": "OK", "location": location})


def _signed_in(settings: Settings, token: str, location: str) -> Response:
    response = OrjsonResponse({"statusCode": 200, "message": "OK", "location": location})
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(SESSION_MAX.total_seconds()),
        path="/",
        **_cookie_flags(settings),
    )
    return response
