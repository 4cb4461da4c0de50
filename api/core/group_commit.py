"""Group commit: work that arrives together is done in one go (docs/architecture.md).

On SQLite a commit is most of a small write's cost, and the API does SQLite work on the
event loop, one request after another. `GroupCommit` collects what the requests hand
it until the loop comes back to it (requests parsed meanwhile join), then runs the
whole group in one call, and only then answers each request: no request is answered
before the work it waits for is done. Under light load a group is one request, as before.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


# One result per item, in order; an exception is raised to that item's request alone.
Together = Callable[[Sequence[Item]], list[Result | Exception]]


class GroupCommit(Generic[Item, Result]):
    """Runs `together(items)` once for the items submitted while it was waiting for the
    event loop, and hands each request its own result."""

    def __init__(self, together: Together[Item, Result]):
        self._together = together
        self._waiting: list[tuple[Item, asyncio.Future[Result]]] = []

    async def submit(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        if not self._waiting:
            loop.call_soon(self._run)
        self._waiting.append((item, future))
        return await future

    def _run(self) -> None:
        group, self._waiting = self._waiting, []
        try:
            results = self._together([item for item, _ in group])
        except Exception as exc:  # every request of the group gets the error
            for _, future in group:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(group, results, strict=True):
            if future.done():  # a request cancelled meanwhile needs no answer
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)


class PerLoop(Generic[Item, Result]):
    """One `GroupCommit` per event loop and key (a future belongs to its loop)."""

    def __init__(self) -> None:
        self._groups: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[object, GroupCommit[Item, Result]]
        ] = weakref.WeakKeyDictionary()

    def get(self, key: object, together: Together[Item, Result]) -> GroupCommit[Item, Result]:
        groups = self._groups.setdefault(asyncio.get_running_loop(), {})
        group = groups.get(key)
        if group is None:
            group = groups[key] = GroupCommit(together)
        return group
