"""`GroupCommit`: the requests waiting for the event loop are run as one group, and
each gets its own result or error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from api.core.group_commit import GroupCommit
from tests import aio


def test_requests_waiting_together_run_as_one_group_and_get_their_own_results():
    groups: list[list[int]] = []

    def together(items: Sequence[int]) -> list[int | Exception]:
        groups.append(list(items))
        return [ValueError(f"bad {i}") if i == 3 else i * 10 for i in items]

    committer: GroupCommit[int, int] = GroupCommit(together)

    async def main() -> list[int | BaseException]:
        return await asyncio.gather(
            *(committer.submit(i) for i in range(5)), return_exceptions=True
        )

    results = aio.run(main())
    assert groups == [[0, 1, 2, 3, 4]]
    assert results[:3] == [0, 10, 20] and results[4] == 40
    assert isinstance(results[3], ValueError) and str(results[3]) == "bad 3"


def test_a_later_request_starts_a_new_group():
    groups: list[list[str]] = []

    def together(items: Sequence[str]) -> list[str | Exception]:
        groups.append(list(items))
        return list(items)

    committer: GroupCommit[str, str] = GroupCommit(together)

    async def main() -> None:
        assert await committer.submit("a") == "a"
        assert await committer.submit("b") == "b"

    aio.run(main())
    assert groups == [["a"], ["b"]]


def test_a_group_that_fails_as_a_whole_fails_each_request():
    def together(items: Sequence[int]) -> list[int | Exception]:
        raise RuntimeError("down")

    committer: GroupCommit[int, int] = GroupCommit(together)

    async def main() -> None:
        with pytest.raises(RuntimeError, match="down"):
            await committer.submit(1)

    aio.run(main())
