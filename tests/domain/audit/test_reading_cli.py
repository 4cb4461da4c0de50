"""`questwall audit list` and `questwall audit export`: the filters as options, a bad value
a usage error naming its option (nothing recorded), and an export written to a file or
standard output, recorded as `audit.exported` by the operating-system user who ran it."""

from __future__ import annotations

import csv
import getpass
import json

import pytest

from api import audit
from api.core.db import new_session
from tests.domain.audit.test_reading import trail  # noqa: F401 (a fixture)


@pytest.fixture
def questwall(db_url, tmp_path, monkeypatch):
    """`questwall …` in this process, on this test's database."""
    from click.testing import CliRunner

    from api.cli import main
    from tests.conftest import MASTER_KEY
    from tests.live import forget_process_settings

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("SECRET_KEY", MASTER_KEY)
    monkeypatch.setenv("QUESTWALL_DATA_DIR", str(tmp_path / "data"))
    forget_process_settings()

    def run(*args: str):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    yield run
    forget_process_settings()


def exported(engine) -> list[dict]:
    with new_session(engine) as session:
        return audit.read_page(session, audit.filters(action="audit.exported")).rows


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["game.renamed", "conversion.approved", "offerwall.suspended"]),
        (("--action", "offerwall."), ["offerwall.suspended", "offerwall.approved"]),
        (("--actor", "bob@example.com", "--limit", "1"), ["game.renamed"]),
        (("--target", "offerwall:w-2"), ["offerwall.suspended"]),
        (("--target", "mission"), ["mission.changed"]),
        (
            ("--since", "2026-11-21", "--until", "2026-11-22"),
            ["offerwall.suspended", "mission.changed"],
        ),
    ],
)
def test_list_filters_newest_first(trail, questwall, args, expected):  # noqa: F811
    limit = () if "--limit" in args else ("--limit", "3")
    listed = questwall("audit", "list", "--json", *limit, *args)
    assert listed.exit_code == 0, listed.output
    assert [json.loads(line)["action"] for line in listed.output.splitlines()] == expected


def test_list_reads_past_one_page_and_as_text(trail, questwall, monkeypatch):  # noqa: F811
    monkeypatch.setattr(audit.reading, "MAX_LIMIT", 2)
    listed = questwall("audit", "list", "--limit", "4")
    lines = listed.output.splitlines()
    assert len(lines) == 4 and "bob@example.com game.renamed game game g-1" in lines[0]
    assert "(name: Old → " in lines[0]


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--since", "yesterday"), "--since"),
        (("--until", "2026-11-31"), "--until"),
        (("--target", ":w-1"), "--target"),
        (("--action", "Not An Action"), "--action"),
    ],
)
@pytest.mark.parametrize("command", ["list", "export"])
def test_a_bad_value_is_a_usage_error_naming_it(trail, questwall, args, option, command):  # noqa: F811
    fmt = ("--format", "csv") if command == "export" else ()
    refused = questwall("audit", command, *fmt, *args)
    assert refused.exit_code == 2
    assert option in refused.output and "Traceback" not in refused.output
    assert exported(trail) == []


def test_export_to_a_file_as_csv_is_recorded_with_the_cli_user(trail, questwall, tmp_path):  # noqa: F811
    target = tmp_path / "audit.csv"
    made = questwall(
        "audit", "export", "--format", "csv", "--output", str(target), "--action", "offerwall."
    )
    assert made.exit_code == 0, made.output
    assert "2 event(s) written to" in made.stderr
    rows = list(csv.DictReader(target.open(encoding="utf-8", newline="")))
    assert [r["action"] for r in rows] == ["offerwall.approved", "offerwall.suspended"]
    [event] = exported(trail)
    assert (event["actor_kind"], event["actor_email"]) == ("cli", getpass.getuser())
    assert event["changes"]["rows"] == [None, 2]
    assert event["changes"]["filters"] == [None, {"action": "offerwall."}]


def test_export_to_standard_output_as_json_lines(trail, questwall):  # noqa: F811
    made = questwall("audit", "export", "--format", "jsonl", "--target", "game:g-1")
    lines = [json.loads(line) for line in made.stdout.splitlines()]
    assert [e["action"] for e in lines] == ["game.renamed"]
    assert exported(trail)[0]["changes"]["format"] == [None, "jsonl"]


def test_export_needs_a_format(trail, questwall):  # noqa: F811
    refused = questwall("audit", "export")
    assert refused.exit_code == 2 and "--format" in refused.output
