"""FastAPI dependencies: the engine, the secret box, settings, the signed requests' and
the reporting API's rate limiters, swappable in tests.

They are `async def` on purpose: FastAPI runs a plain `def` dependency in a worker
thread, which for a one-line attribute read costs more than the read.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.ratelimit import RateLimiter


async def get_engine_dep(request: Request) -> Engine:
    return request.app.state.engine


async def get_box(request: Request) -> SecretBox:
    return request.app.state.box


async def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


async def get_ingest_limiter(request: Request) -> RateLimiter:
    return request.app.state.ingest_limiter


async def get_reports_limiter(request: Request) -> RateLimiter:
    return request.app.state.reports_limiter


EngineDep = Annotated[Engine, Depends(get_engine_dep)]
BoxDep = Annotated[SecretBox, Depends(get_box)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
LimiterDep = Annotated[RateLimiter, Depends(get_ingest_limiter)]
ReportsLimiterDep = Annotated[RateLimiter, Depends(get_reports_limiter)]
