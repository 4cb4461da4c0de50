"""Every refusal to start is one line on stderr naming the setting, without a traceback,
and a non-zero exit.

An operator meets these on the real command line, and a few of them are checked there:
one for each way a command reaches its checks (`serve`, `api`, `worker`, `migrate`, a
plain command) and the API's ASGI entry point, which refuses while it is imported. Every
case also runs in this process through click's test runner, which gives the same exit
status and the same stderr without the 3 s of imports each new Python process costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.core.config import Settings, get_settings
from api.core.startup import StartRefused, load_settings
from tests.live import forget_process_settings, free_port, run_cli

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
KEY_A = "start-check-master-key-a"
KEY_B = "start-check-master-key-b"

Questwall = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY_PREVIOUS", "TRUSTED_PROXIES", "QUESTWALL_ENV"}
    }
    return {
        **base,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'start.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": KEY_A,
    }


def _started(*_: object) -> None:
    raise AssertionError("the checks let it start: it was not refused")


@pytest.fixture
def questwall(env, monkeypatch) -> Iterator[Questwall]:
    """Runs `questwall …` in this process, with exactly the environment `env` (and the
    changes a call names), as `run_cli` would run it in a process of its own.

    `serve`, `api` and `worker` make the event partitions right after their checks: there a
    command the checks let through fails the test instead of starting a server."""
    from api.cli import main

    for name in os.environ.keys() - env.keys():
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("api.ingest.ensure_partitions", _started)

    def run(*args: str, **changes: str) -> subprocess.CompletedProcess[str]:
        forget_process_settings()
        try:
            outcome = CliRunner(env=changes).invoke(main, list(args), catch_exceptions=False)
        finally:
            forget_process_settings()
        return subprocess.CompletedProcess(args, outcome.exit_code, outcome.stdout, outcome.stderr)

    yield run
    forget_process_settings()


def assert_refused(result: subprocess.CompletedProcess[str], *needles: str) -> str:
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Traceback" not in output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _migrated(questwall: Questwall) -> dict[str, str]:
    assert questwall("migrate").returncode == 0
    return json.loads(questwall("game", "create", "Keyed").stdout)


SERVE = ("serve", "--host", "127.0.0.1", "--port", "1")  # refused before it binds anything


def unreachable() -> str:
    return f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/questwall"


UNREACHABLE = "a PostgreSQL server nothing listens for"  # a free port's URL, made at run time


@pytest.mark.slow  # each case starts a Python process of its own
@pytest.mark.parametrize(
    ("command", "changes", "needle"),
    [
        # `serve` checks before it builds the portal and starts Reflex's process.
        pytest.param(SERVE, {"DATABASE_URL": "not-a-database"}, "DATABASE_URL", id="serve"),
        # `api` checks before uvicorn starts its worker processes.
        pytest.param(
            ("api", "--port", "1"),
            {"TRUSTED_PROXIES": "10.0.0.1,not-an-ip"},
            "TRUSTED_PROXIES",
            id="api",
        ),
        # `worker` meets PostgreSQL's driver failing to connect: whatever the driver or
        # its warnings print goes to the real stderr, where this process's pytest would
        # have caught it.
        pytest.param(("worker",), {"DATABASE_URL": UNREACHABLE}, "cannot reach", id="worker"),
        # `migrate` has checks of its own, before Alembic runs.
        pytest.param(
            ("migrate",), {"DATABASE_URL": "not-a-database"}, "DATABASE_URL", id="migrate"
        ),
        # A plain command, through the checks every command shares.
        pytest.param(
            ("game", "list"),
            {"QUESTWALL_ENV": "production", "SECRET_KEY": ""},
            "SECRET_KEY must be set",
            id="plain",
        ),
    ],
)
def test_the_real_command_line_refuses_in_one_line(env, command, changes, needle):
    """As an operator meets it: what a new process prints while it imports, logs or warns
    reaches stderr here, which pytest would catch in its own process."""
    if changes.get("DATABASE_URL") == UNREACHABLE:
        changes = {**changes, "DATABASE_URL": unreachable()}
    assert_refused(run_cli(env, *command, **changes), needle)


@pytest.mark.slow  # a Python process of its own
def test_the_api_entry_point_refuses_a_wrong_master_key(env, questwall):
    """The ASGI entry point checks while it is imported, so only a new process shows it."""
    _migrated(questwall)
    result = subprocess.run(
        [sys.executable, "-c", "import api.asgi"],
        cwd=ROOT,
        env={**env, "SECRET_KEY": KEY_B},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert_refused(result, "SECRET_KEY")


REFUSALS = {
    # case: (environment changes, text the line must contain)
    "database_url_not_a_url": ({"DATABASE_URL": "not-a-database"}, "DATABASE_URL"),
    "database_url_unknown_driver": ({"DATABASE_URL": "mysql+nodriver://h/db"}, "DATABASE_URL"),
    "production_without_secret_key": (
        {"QUESTWALL_ENV": "production", "SECRET_KEY": ""},
        "SECRET_KEY must be set",
    ),
    "trusted_proxies_not_an_ip": ({"TRUSTED_PROXIES": "10.0.0.1,not-an-ip"}, "TRUSTED_PROXIES"),
    "database_pooler_unknown": (
        {"DATABASE_POOLER": "pgpool"},
        "DATABASE_POOLER is invalid: set it to pgbouncer",
    ),
    "database_pooler_for_sqlite": (
        {"DATABASE_POOLER": "pgbouncer"},
        "DATABASE_POOLER is for PostgreSQL behind PgBouncer, not sqlite",
    ),
}


@pytest.mark.parametrize(
    ("case", "command"),
    [
        *((case, SERVE) for case in sorted(REFUSALS)),
        ("database_url_not_a_url", ("migrate",)),
        ("production_without_secret_key", ("game", "list")),
        ("trusted_proxies_not_an_ip", ("api",)),
    ],
)
def test_a_bad_setting_is_refused_in_one_line(questwall, case, command):
    changes, needle = REFUSALS[case]
    assert_refused(questwall(*command, **changes), needle)


@pytest.mark.parametrize("command", [SERVE, ("api", "--workers", "1"), ("worker",)])
def test_a_limit_the_limiter_cannot_take_is_refused_in_one_line(questwall, command):
    assert questwall("migrate").returncode == 0  # so nothing else stops it first
    if command[0] == "api":
        command = (*command, "--port", str(free_port()))
    line = assert_refused(questwall(*command, QUESTWALL_INGEST_RATE="0"), "QUESTWALL_INGEST_RATE")
    assert "greater than 0" in line and "unset it for the default (500)" in line


NUMBERS = sorted(
    field.alias or name
    for name, field in Settings.model_fields.items()
    if field.annotation in (int, float)
)
# The numbers whose 0 means something (off, or the failures alone): README.md says what.
ZERO_MEANS_SOMETHING = {
    "POSTBACK_PAUSE_AFTER_SECONDS",
    "QUESTWALL_CLICKS_PER_IP",
    "QUESTWALL_DRAIN_SECONDS",
    "QUESTWALL_CLICKS_PER_UID",
    "QUESTWALL_PLAYERS_PER_IP",
    "QUESTWALL_REVIEW_AUTO_APPROVE_HOURS",
    "QUESTWALL_STALE_EVENT_HOURS",
}


def _refusal(monkeypatch, name: str, value: str) -> str | None:
    """The one line `load_settings` refuses NAME=VALUE with, or None when it takes it."""
    monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        load_settings()
    except StartRefused as exc:
        return str(exc)
    finally:
        monkeypatch.delenv(name)
        get_settings.cache_clear()
    return None


@pytest.mark.parametrize("name", NUMBERS)
def test_every_number_is_refused_at_start_unless_usable(monkeypatch, name):
    for value in ("-1", "nan", "inf", "many"):
        line = _refusal(monkeypatch, name, value)
        assert line is not None, f"{name}={value} was taken"
        assert line.startswith(f"{name} is invalid: ") and "unset it for the default" in line
        assert "\n" not in line
    zero = _refusal(monkeypatch, name, "0")
    if name in ZERO_MEANS_SOMETHING:
        assert zero is None, zero
        row = next(line for line in README.read_text().splitlines() if f"`{name}`" in line)
        assert "`0`" in row, row  # the table says what 0 does
    else:
        assert zero is not None and zero.startswith(f"{name} is invalid: ")


@pytest.mark.parametrize("command", [SERVE, ("worker",)])
def test_an_unreachable_database_is_refused_in_one_line(questwall, command):
    line = assert_refused(
        questwall(*command, DATABASE_URL=unreachable()), "DATABASE_URL", "cannot reach"
    )
    assert "start the database" in line


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("direct", "command", "needle"),
    [
        ("sqlite:///direct.db", ("game", "list"), "DATABASE_DIRECT_URL is invalid: set it to"),
        ("not a url", ("migrate",), "DATABASE_DIRECT_URL is invalid: set it to postgresql"),
        ("unreachable", ("migrate",), "DATABASE_DIRECT_URL: cannot reach the database"),
        ("unreachable", ("game", "list"), "DATABASE_DIRECT_URL: cannot reach the database"),
    ],
)
def test_a_direct_url_that_is_no_usable_postgresql_is_refused_in_one_line(
    questwall, postgres_server_url, direct, command, needle
):
    changes = {
        "DATABASE_URL": postgres_server_url,
        "DATABASE_POOLER": "pgbouncer",
        "DATABASE_DIRECT_URL": unreachable() if direct == "unreachable" else direct,
    }
    assert_refused(questwall(*command, **changes), needle)


@pytest.mark.parametrize("command", [SERVE, ("api",)])
def test_an_unmigrated_database_is_refused_in_one_line(questwall, command):
    assert_refused(questwall(*command), "DATABASE_URL", "questwall migrate")


def test_a_wrong_master_key_is_refused_in_one_line(questwall):
    game = _migrated(questwall)
    commands = (SERVE, ("api",), ("worker",), ("migrate",), ("credential", "add", game["gameId"]))
    for command in commands:
        line = assert_refused(questwall(*command, SECRET_KEY=KEY_B), "SECRET_KEY")
        assert "SECRET_KEY_PREVIOUS" in line
    # `credential add` under another key would have mixed two master keys: nothing was added.
    listing = json.loads(questwall("game", "list").stdout)
    assert len(listing[0]["credentials"]) == 1


def test_the_previous_key_is_accepted_during_a_rotation(questwall):
    _migrated(questwall)
    result = questwall("game", "list", SECRET_KEY=KEY_B, SECRET_KEY_PREVIOUS=KEY_A)
    assert result.returncode == 0, result.stderr
