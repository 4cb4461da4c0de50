"""create_api(): the FastAPI application, mountable into the Reflex portal or served alone."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from sqlalchemy import Engine
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from api.core.config import Settings, get_settings
from api.core.crypto import SecretBox, get_secret_box
from api.core.db import get_engine
from api.core.errors import ApiError, error_body
from api.responses import OrjsonResponse
from api.routes import events, lookup, offerwall, tracking
from api.routes.docs import add_raw_body_schemas
from api.security_headers import install_security_headers
from api.services.geo import CountryLookup, country_lookup
from api.services.ratelimit import RateLimiter

log = logging.getLogger("questwall.api")

# Path prefixes the API owns; everything else belongs to the portal.
API_PREFIXES = ("/v2", "/offerwall")


def create_api(
    *,
    engine: Engine | None = None,
    settings: Settings | None = None,
    box: SecretBox | None = None,
    countries: CountryLookup | None = None,
) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(
        title="Questwall API",
        version="2.0.0",
        description="Signed game events and identifiers, platform-user lookup, offers.",
        docs_url="/v2/docs",
        redoc_url=None,
        openapi_url="/v2/openapi.json",
        default_response_class=OrjsonResponse,
    )
    app.state.settings = settings
    app.state.engine = engine or get_engine()
    app.state.box = box or get_secret_box()
    app.state.ingest_limiter = RateLimiter(settings.ingest_rate_per_second, settings.ingest_burst)
    app.state.countries = countries or country_lookup(settings.geoip_database or None)

    app.include_router(events.router)
    app.include_router(lookup.router)
    app.include_router(tracking.router)
    app.include_router(offerwall.router)
    _add_error_handlers(app)
    _add_catch_alls(app)
    _customize_openapi(app)
    install_security_headers(app, settings)
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

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> OrjsonResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _json_error(500, "internal_error", "An unexpected error occurred; it was logged.")


def _add_catch_alls(app: FastAPI) -> None:
    """Unknown paths or methods under an API prefix answer JSON, never the portal's HTML."""
    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

    async def _fallback(request: Request) -> OrjsonResponse:
        # Another route that matches the path but not the method makes this a 405.
        for route in app.router.routes:
            if getattr(route, "name", None) == "api_fallback":
                continue
            if route.matches(request.scope)[0] == Match.PARTIAL:
                return _json_error(
                    405, "method_not_allowed", f"{request.method} is not allowed here."
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
            app.openapi_schema = add_raw_body_schemas(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
