"""create_api(): the FastAPI application, mountable into the Reflex portal or served alone."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi_offline import FastAPIOffline
from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match

from api.core.config import Settings, get_settings
from api.core.crypto import SecretBox, get_secret_box
from api.core.db import get_engine
from api.core.errors import ApiError, error_body
from api.core.geo import CountryLookup, country_lookup
from api.core.ratelimit import ingest_limiter, reports_limiter
from api.fraud import Policy
from api.ingest import RefusalRecorder
from api.responses import OrjsonResponse
from api.routes import (
    events,
    lookup,
    offerwall,
    reports_api,
    staff_audit,
    staff_reports,
    tracking,
    wall,
)
from api.routes.docs import add_raw_body_schemas, drop_unreachable_answers
from api.routes.tracking import TRACKING_PREFIXES, page_language, unavailable_page
from api.security_headers import install_security_headers
from api.tracking import click_screen

log = logging.getLogger("questwall.api")

# Path prefixes the API owns; everything else belongs to the portal.
API_PREFIXES = ("/v2", "/offerwall")
# The API reference and the files it loads (packaged with fastapi-offline).
DOCS_PATH = "/v2/docs"
DOCS_STATIC_PATH = "/v2/docs/static"

# Errors that mean "the database cannot be reached or is busy right now" (a restart, a
# failover, a full pool, a lock held too long, a deadlock after its retries): the request
# did nothing and may be sent again, so it gets 503 with Retry-After instead of a 500.
DATABASE_UNAVAILABLE = (
    sa_exc.OperationalError,
    sa_exc.InterfaceError,
    sa_exc.DisconnectionError,
    sa_exc.TimeoutError,
)
RETRY_AFTER_SECONDS = 5


def create_api(
    *,
    engine: Engine | None = None,
    settings: Settings | None = None,
    box: SecretBox | None = None,
    countries: CountryLookup | None = None,
    on_stored: Callable[[str], None] | None = None,
) -> FastAPI:
    """The API's app. `on_stored(game_id)`, when given, is called after a custom-events
    batch for that game was answered, or a refused signed request of it was recorded
    (whoever mounts the API, e.g. the portal's live debugger, learns there is new data
    without the API knowing about it)."""
    settings = settings or get_settings()
    # The API reference (Swagger UI) with its script and stylesheet served from the
    # package, not a CDN: it works on a machine without internet.
    app = FastAPIOffline(
        title="Questwall API",
        version="2.0.0",
        description="Signed game events and identifiers, platform-user lookup, offers, "
        "publishers' reports, staff's margin report.",
        docs_url=DOCS_PATH,
        redoc_url=None,
        static_url=DOCS_STATIC_PATH,
        swagger_ui_oauth2_redirect_url=f"{DOCS_PATH}/oauth2-redirect",
        openapi_url="/v2/openapi.json",
        default_response_class=OrjsonResponse,
    )
    app.state.settings = settings
    app.state.engine = engine or get_engine()
    app.state.box = box or get_secret_box()
    app.state.ingest_limiter = ingest_limiter(settings)
    app.state.reports_limiter = reports_limiter(settings)
    app.state.click_screen = click_screen(settings, app.state.engine)
    app.state.fraud_policy = Policy.from_settings(settings)
    app.state.countries = countries or country_lookup(settings.geoip_database or None)
    app.state.on_stored = on_stored
    app.state.refusals = RefusalRecorder()

    routers = (  # the busiest first: routes are matched in this order
        offerwall.router,
        tracking.router,
        events.router,
        lookup.router,
        reports_api.router,
        staff_reports.router,
        staff_audit.router,
        wall.router,
    )
    for router in routers:
        app.include_router(router)
    _add_error_handlers(app)
    _add_catch_alls(app, [route for router in routers for route in router.routes])
    _customize_openapi(app)
    install_security_headers(app, settings, docs_path=DOCS_PATH)
    return app


def _json_error(status: int, code: str, message: str, details: Any = None, headers: Any = None):
    return OrjsonResponse(
        error_body(status, code, message, details), status_code=status, headers=headers
    )


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> OrjsonResponse:
        return OrjsonResponse(exc.body(), status_code=exc.status, headers=exc.headers or None)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> OrjsonResponse:
        details = [
            {"path": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "type": e["type"]}
            for e in exc.errors()
        ]
        return _json_error(422, "validation_failed", "The request is invalid.", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> OrjsonResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _json_error(exc.status_code, code, str(exc.detail), headers=exc.headers)

    async def _unavailable(request: Request, exc: Exception) -> Response:
        log.warning(
            "database unavailable on %s %s: %s",
            request.method,
            request.url.path,
            type(exc.__cause__ or exc).__name__,
        )
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        if request.url.path.startswith(TRACKING_PREFIXES):
            return unavailable_page(headers, page_language(request))
        return _json_error(
            503,
            "service_unavailable",
            "The service cannot reach its database right now; nothing was stored. "
            f"Retry in {RETRY_AFTER_SECONDS} seconds.",
            headers=headers,
        )

    for error in DATABASE_UNAVAILABLE:
        app.add_exception_handler(error, _unavailable)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> OrjsonResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _json_error(500, "internal_error", "An unexpected error occurred; it was logged.")


def _add_catch_alls(app: FastAPI, api_routes: list[BaseRoute]) -> None:
    """Unknown paths or methods under an API prefix answer JSON, never the portal's HTML."""
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

    async def _fallback(request: Request) -> OrjsonResponse:
        # Routes that match the path but not the method make this a 405 naming them.
        allowed: set[str] = set()
        for route in api_routes:
            if route.matches(request.scope)[0] == Match.PARTIAL:
                allowed.update(getattr(route, "methods", None) or ())
        if allowed:
            allow = ", ".join(sorted(allowed))
            return _json_error(
                405,
                "method_not_allowed",
                f"{request.method} is not allowed here; use {allow}.",
                headers={"Allow": allow},
            )
        return _json_error(404, "not_found", f"No API endpoint at {request.url.path}.")

    for prefix in API_PREFIXES:
        app.add_api_route(
            prefix + "/{rest:path}",
            _fallback,
            methods=methods,
            include_in_schema=False,
            name="api_fallback",
        )


def _customize_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title, version=app.version, description=app.description, routes=app.routes
            )
            app.openapi_schema = drop_unreachable_answers(add_raw_body_schemas(schema))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
