"""Running a coroutine from a synchronous test.

`asyncio.run` refuses to start when the thread already has a running loop, and a browser
test's Playwright (sync API) leaves one in the main thread for the rest of the session; so
the coroutine gets a thread, and a loop, of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
