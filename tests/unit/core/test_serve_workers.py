"""`questwall serve --workers N`: more than one backend process only with REDIS_URL, where
the portal's state is shared; refused in one line otherwise."""

from __future__ import annotations

import os

import pytest

from tests.live import run_cli

pytestmark = pytest.mark.slow  # every test starts Python processes of its own


def _env(tmp_path, **changes: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'serve.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "serve-test-master-key",
        "REDIS_URL": "",
        **changes,
    }


def test_several_workers_without_redis_are_refused_in_one_line(tmp_path):
    assert run_cli(_env(tmp_path), "migrate").returncode == 0
    result = run_cli(_env(tmp_path), "serve", "--workers", "2")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "Error: --workers 2 needs REDIS_URL: without it each process keeps its own portal "
        "state; set REDIS_URL=redis://host:6379/0 or serve with --workers 1"
    ]


def test_no_workers_is_a_usage_error(tmp_path):
    result = run_cli(_env(tmp_path), "serve", "--workers", "0")
    assert result.returncode == 2 and "--workers" in result.stderr


def test_the_start_checks_come_first(tmp_path):
    # An unmigrated database is refused as for one worker, before the workers are looked at.
    result = run_cli(_env(tmp_path), "serve", "--workers", "2")
    assert result.returncode == 1 and "questwall migrate" in result.stderr
