"""With REDIS_URL the portal's state lives in Redis (Reflex's Redis state manager, chosen in
`rxconfig.py`), so what one backend process stored for a browser session another reads:
what `questwall serve --workers N` relies on. Without it each process keeps its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.live import ROOT


def _probe(tmp_path: Path, *args: str, redis_url: str = "") -> str:
    """Run one backend process's state step (a fresh interpreter each time)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("REDIS_URL")}
    result = subprocess.run(
        [sys.executable, "-m", "tests.portal.state_probe", *args],
        cwd=ROOT,
        env={
            **env,
            "REDIS_URL": redis_url,
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_STATES_WORKDIR": str(tmp_path / "states"),  # the disk manager's files
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip()


def test_a_session_state_written_by_one_process_is_read_by_another(
    tmp_path, redis_url, redis_prefix
):
    token = f"{redis_prefix}-browser-tab"  # its keys start with the test's prefix
    _probe(tmp_path / "one", "write", token, "signed in", redis_url=redis_url)
    read = _probe(tmp_path / "two", "read", token, redis_url=redis_url)
    assert read == "StateManagerRedis note='signed in'"


def test_without_redis_the_state_stays_with_the_process(tmp_path):
    # Reflex's default: in memory, saved to the process's own directory, shared with no one.
    assert _probe(tmp_path, "read", "a-browser-tab") == "StateManagerDisk note=''"
