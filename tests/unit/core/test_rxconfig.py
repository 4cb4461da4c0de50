"""The portal's Reflex configuration reads BASE_URL through the settings, as the API does,
so a value in `.env` moves the portal's CORS origin along with the tracking links."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every test starts Python processes of its own

ROOT = Path(__file__).resolve().parents[3]
SHOW_ORIGINS = "import rxconfig, json; print(json.dumps(rxconfig.config.cors_allowed_origins))"


def _origins(cwd: Path, **env: str) -> list[str]:
    """Load rxconfig in a fresh interpreter (its settings are read once, at import)."""
    clean = {k: v for k, v in os.environ.items() if k != "BASE_URL"}
    result = subprocess.run(
        [sys.executable, "-c", SHOW_ORIGINS],
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_base_url_in_dotenv_moves_the_cors_origin(tmp_path):
    (tmp_path / ".env").write_text("BASE_URL=https://portal.example.com/\n")
    assert _origins(tmp_path) == ["https://portal.example.com"]


def test_the_environment_wins_over_dotenv(tmp_path):
    (tmp_path / ".env").write_text("BASE_URL=https://portal.example.com\n")
    assert _origins(tmp_path, BASE_URL="https://other.example.org") == ["https://other.example.org"]


def test_the_default_accepts_localhost_either_way(tmp_path):
    assert _origins(tmp_path) == ["http://localhost:8000", "http://127.0.0.1:8000"]
