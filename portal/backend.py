"""The portal's way to the domain: the shared engine, secret box and settings, and a
helper that runs blocking work (database, Argon2, HTTP) off the event loop the API
shares with the portal."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from functools import lru_cache
from typing import ParamSpec, TypeVar

from sqlalchemy import Engine

from api.core.config import Settings, get_settings
from api.core.crypto import SecretBox, get_secret_box
from api.core.db import get_engine
from api.ops import DRAIN_FILE_VARIABLE, Readiness

T = TypeVar("T")
P = ParamSpec("P")


def engine() -> Engine:
    return get_engine()


def box() -> SecretBox:
    return get_secret_box()


def settings() -> Settings:
    return get_settings()


@lru_cache(maxsize=1)
def readiness() -> Readiness:
    """The checks of this process's `/readyz`, for the System page: one per process, so a
    database that does not answer holds one waiting check, not one per page load."""
    return Readiness(
        engine(), redis_url=settings().redis_url, drain_file=os.environ.get(DRAIN_FILE_VARIABLE)
    )


async def off_loop(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    return await asyncio.to_thread(work, *args, **kwargs)
