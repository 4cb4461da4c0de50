"""`questwall serve --workers 2` with REDIS_URL: two backend processes, the portal's state in
Redis, and a signed-in session that keeps working whichever process its page loads reach."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Portal, served_portal
from tests.e2e.steps import sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture
def two_workers(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Portal]:
    env = {"REDIS_URL": redis_url, "REDIS_KEY_PREFIX": redis_prefix}
    with served_portal(tmp_path, "--workers", "2", build="two-workers", **env) as served:
        yield served


def _process_group(pgid: int) -> list[str]:
    """The command lines of the processes in a process group."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            found.append(cmdline)
    return found


def test_two_backend_processes_serve_one_signed_in_session(two_workers, new_page):
    # Granian's supervisor and its two workers (forked: the same command line).
    assert sum("reflex run" in c for c in _process_group(two_workers.pid)) == 1 + 2
    page = new_page()
    sign_in(page, two_workers.url, *two_workers.staff)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    for _ in range(4):  # each load opens a new event socket, on either process
        page.reload()
        expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
        # A reload may reach the process that has not served this browser yet: it reads
        # the state from Redis first (slower on a loaded machine than the default 5 s).
        expect(page.get_by_role("button", name="Account menu")).to_contain_text(
            two_workers.staff[0], timeout=20_000
        )
