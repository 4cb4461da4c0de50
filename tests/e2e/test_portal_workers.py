"""`questwall serve --workers 2` with REDIS_URL: two backend processes, the portal's state in
Redis, and a signed-in session that keeps working whichever process its page loads reach."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from playwright.sync_api import expect

from tests.e2e.conftest import Portal, served_portal
from tests.e2e.steps import sign_in

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def two_workers(
    tmp_path_factory: pytest.TempPathFactory, redis_server_url: str
) -> Iterator[Portal]:
    prefix = f"questwall-test-{uuid.uuid4().hex[:12]}"
    tmp = tmp_path_factory.mktemp("workers")
    env = {"REDIS_URL": redis_server_url, "REDIS_KEY_PREFIX": prefix}
    with served_portal(tmp, "--workers", "2", **env) as served:
        yield served
    client = redis.Redis.from_url(redis_server_url)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


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
    expect(page.get_by_role("heading", name="Publishers")).to_be_visible()
    for _ in range(4):  # each load opens a new event socket, on either process
        page.reload()
        expect(page.get_by_role("heading", name="Publishers")).to_be_visible()
        expect(page.get_by_role("button", name="Account menu")).to_contain_text(
            two_workers.staff[0]
        )
