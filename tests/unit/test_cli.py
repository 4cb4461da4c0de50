"""The `questwall` command, run as a user runs it (a real subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "cli-test-master-key",
    }

    def _run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [sys.executable, "-m", "api.cli", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and result.returncode != 0:
            raise AssertionError(result.stderr)
        return result

    return _run


def test_every_command_has_help():
    from click.testing import CliRunner

    from api.cli import main

    for command in (
        [],
        ["migrate"],
        ["game"],
        ["game", "create"],
        ["game", "list"],
        ["credential"],
        ["credential", "add"],
        ["credential", "rotate"],
        ["credential", "revoke"],
        ["serve"],
        ["api"],
        ["prune"],
    ):
        result = CliRunner().invoke(main, [*command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, command


def test_commands_refuse_an_unmigrated_database(run):
    result = run("game", "list", check=False)
    assert result.returncode != 0
    assert "questwall migrate" in result.stderr
    serve = run("serve", check=False)
    assert serve.returncode != 0 and "questwall migrate" in serve.stderr


def test_create_game_rotate_and_revoke(run):
    run("migrate")
    created = json.loads(run("game", "create", "Space Arena").stdout)
    assert set(created) == {"gameId", "clientId", "clientSecret"}
    assert created["clientSecret"].startswith("qw_cs_")

    second = json.loads(run("credential", "add", created["gameId"]).stdout)
    third = run("credential", "add", created["gameId"], check=False)
    assert third.returncode != 0 and "two live credentials" in third.stderr

    rotated = json.loads(
        run("credential", "rotate", created["gameId"], "--revoke", created["clientId"]).stdout
    )
    listing = json.loads(run("game", "list").stdout)
    [game] = listing
    assert game["name"] == "Space Arena"
    states = {c["clientId"]: c["revokedAt"] is None for c in game["credentials"]}
    assert states == {
        created["clientId"]: False,
        second["clientId"]: True,
        rotated["clientId"]: True,
    }
    # The listing never shows a secret.
    assert created["clientSecret"] not in json.dumps(listing)

    run("credential", "revoke", created["gameId"], second["clientId"])
    listing = json.loads(run("game", "list").stdout)
    assert sum(c["revokedAt"] is None for c in listing[0]["credentials"]) == 1


def test_secret_is_encrypted_at_rest(run, tmp_path):
    import sqlite3

    run("migrate")
    created = json.loads(run("game", "create", "Vault").stdout)
    raw = sqlite3.connect(tmp_path / "cli.db").execute("SELECT * FROM game_credential").fetchall()
    assert created["clientSecret"] not in repr(raw)
