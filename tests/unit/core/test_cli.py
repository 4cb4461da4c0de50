"""The `questwall` command: run in this process through click's test runner, and once on
the real command line as a user runs it (`test_real_command_line`), since each new Python
process costs 3 s of imports."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from tests.live import forget_process_settings, run_cli

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(tmp_path, monkeypatch):
    values = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "cli-test-master-key",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    forget_process_settings()
    yield {**os.environ, **values}
    forget_process_settings()


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run(env):
    """Runs `questwall …` in this process (fast); test_real_command_line runs the real one."""
    from click.testing import CliRunner

    from api.cli import main

    def _run(*args: str, check: bool = True, **changes: str) -> Result:
        """`changes` to the environment hold for this command alone, and it reads its
        settings and master keys afresh, as a process of its own would."""
        if changes:
            forget_process_settings()
        try:
            outcome = CliRunner(env=changes).invoke(main, list(args), catch_exceptions=False)
        finally:
            if changes:
                forget_process_settings()
        result = Result(outcome.exit_code, outcome.stdout, outcome.stderr)
        if check and result.returncode != 0:
            raise AssertionError(result.stderr)
        return result

    return _run


@pytest.mark.slow  # real subprocesses
def test_real_command_line(env):
    refused = run_cli(env, "game", "list")
    assert refused.returncode != 0 and "questwall migrate" in refused.stderr
    assert run_cli(env, "migrate").returncode == 0
    created = json.loads(run_cli(env, "game", "create", "Real").stdout)
    assert created["clientSecret"].startswith("qw_cs_")


def test_migrate_records_the_master_key_of_a_fresh_database(run, env, tmp_path):
    import sqlite3

    from api.core.crypto import SecretBox

    run("migrate")
    rows = sqlite3.connect(tmp_path / "cli.db").execute("SELECT key_id FROM master_key_check")
    assert [r[0] for r in rows] == [SecretBox([env["SECRET_KEY"]]).current_key_id]


def test_rotate_secrets_then_only_the_new_key(run, env):
    old, new = env["SECRET_KEY"], "cli-test-next-master-key"
    run("migrate")
    game = json.loads(run("game", "create", "Rotated").stdout)
    assert run("game", "list", check=False, SECRET_KEY=new).returncode != 0  # not yet

    rotating = {"SECRET_KEY": new, "SECRET_KEY_PREVIOUS": old}
    first = run("rotate-secrets", **rotating)
    assert "Resealed 1 secret(s)" in first.stdout, first.stderr

    run("credential", "add", game["gameId"], SECRET_KEY=new)
    assert run("game", "list", check=False, SECRET_KEY=old).returncode != 0  # the old key is gone


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
        ["rotate-secrets"],
        ["conversion"],
        ["conversion", "reverse"],
        ["conversion", "list"],
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
    assert set(created) == {"gameId", "clientId", "clientSecret", "name"}
    assert created["clientSecret"].startswith("qw_cs_")
    assert created["name"] == "Key 1"

    second = json.loads(run("credential", "add", created["gameId"], "--name", "prod-key").stdout)
    assert second["name"] == "prod-key"
    third = run("credential", "add", created["gameId"], check=False)
    assert third.returncode != 0 and "two live credentials" in third.stderr

    rotated = json.loads(
        run("credential", "rotate", created["gameId"], "--revoke", created["clientId"]).stdout
    )
    listing = json.loads(run("game", "list").stdout)
    [game] = listing
    assert game["name"] == "Space Arena"
    states = {c["clientId"]: c["revokedAt"] is None for c in game["credentials"]}
    assert [c["name"] for c in game["credentials"]] == ["Key 1", "prod-key", "Key 3"]
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


def test_offerwall_lifecycle(run, tmp_path):
    import sqlite3

    run("migrate")
    created = json.loads(run("offerwall", "create", "Coins Wall").stdout)
    assert created["status"] == "pending" and created["owid"] is None
    approved = json.loads(run("offerwall", "approve", created["id"]).stdout)
    assert approved["owid"].startswith("ow") and approved["apiKey"].startswith("qw_ak_")
    again = run("offerwall", "approve", approved["owid"], check=False)
    assert again.returncode != 0 and "only one that is pending or rejected" in again.stderr
    rotated = json.loads(run("offerwall", "rotate-key", approved["owid"]).stdout)
    assert rotated["apiKey"] != approved["apiKey"] and rotated["owid"] == approved["owid"]
    currency = json.loads(
        run(
            "offerwall",
            "set-currency",
            approved["owid"],
            "--name",
            "Coins",
            "--code",
            "CNS",
            "--rate",
            "250",
            "--decimals",
            "0",
        ).stdout
    )
    assert currency["currency"] == {
        "name": "Coins",
        "code": "CNS",
        "exchangeRate": 250.0,
        "decimals": 0,
    }
    bad = run(
        "offerwall",
        "set-currency",
        approved["owid"],
        "--name",
        "x",
        "--code",
        "usd",
        "--rate",
        "1",
        check=False,
    )
    assert bad.returncode != 0 and "3 capital letters" in bad.stderr
    url = "https://pub.example/pb?tx={transaction_id}&h={hash_key}"
    assert (
        json.loads(run("offerwall", "set-postback", approved["owid"], url).stdout)["postbackUrl"]
        == url
    )
    assert json.loads(run("offerwall", "suspend", approved["owid"]).stdout)["status"] == "suspended"
    assert (
        json.loads(run("offerwall", "reinstate", approved["owid"]).stdout)["status"] == "approved"
    )
    raw = repr(sqlite3.connect(tmp_path / "cli.db").execute("SELECT * FROM offerwall").fetchall())
    assert rotated["apiKey"] not in raw and approved["apiKey"] not in raw
    assert rotated["apiKey"] not in run("offerwall", "list").stdout


def _key_opens(env: dict[str, str], api_key: str) -> bool:
    """Whether the offers API would take the key now (its own look-up, on the CLI's DB)."""
    from api.core.crypto import SecretBox
    from api.core.db import build_engine
    from api.core.errors import ApiError
    from api.listing import approved_offerwall

    engine = build_engine(env["DATABASE_URL"])
    try:
        with engine.connect() as conn:
            approved_offerwall(conn=conn, box=SecretBox([env["SECRET_KEY"]]), api_key=api_key)
        return True
    except ApiError:
        return False
    finally:
        engine.dispose()


def test_offerwall_rotate_key_with_a_grace_period(run, env):
    run("migrate")
    created = json.loads(run("offerwall", "create", "Grace Wall").stdout)
    first = json.loads(run("offerwall", "approve", created["id"]).stdout)["apiKey"]
    graced = json.loads(run("offerwall", "rotate-key", created["id"], "--grace", "1h").stdout)
    assert graced["previousKeyValidUntil"] is not None
    assert _key_opens(env, first) and _key_opens(env, graced["apiKey"])
    # A leaked key: none stops the old one (and the one still in grace) at once.
    leaked = json.loads(run("offerwall", "rotate-key", created["id"], "--grace", "none").stdout)
    assert leaked["previousKeyValidUntil"] is None
    assert [_key_opens(env, k) for k in (first, graced["apiKey"], leaked["apiKey"])] == [
        False,
        False,
        True,
    ]
    wrong = run("offerwall", "rotate-key", created["id"], "--grace", "2h", check=False)
    assert wrong.returncode != 0 and "'none', '1h', '24h'" in wrong.stderr


def test_offerwall_wall_sets_the_hosted_walls_theme_origins_and_signed_links(run):
    run("migrate")
    created = json.loads(run("offerwall", "create", "Themed Wall").stdout)
    owid = json.loads(run("offerwall", "approve", created["id"]).stdout)["owid"]
    shown = json.loads(run("offerwall", "wall", owid).stdout)
    assert (shown["title"], shown["accent"], shown["origins"]) == ("", "#4f46e5", [])
    assert shown["link"].endswith(f"/wall?owid={owid}&uid={{uid}}")
    changed = json.loads(
        run(
            "offerwall",
            "wall",
            owid,
            *("--title", "Gem Rewards", "--accent", "#0F766E"),
            *("--origin", "https://Games.Example.com/", "--origin", "http://localhost:3000"),
            "--require-signature",
        ).stdout
    )
    assert changed["title"] == "Gem Rewards" and changed["accent"] == "#0f766e"
    assert changed["origins"] == ["https://games.example.com", "http://localhost:3000"]
    assert changed["requireSignature"] is True and changed["link"].endswith("&sig={sig}")
    # What is left out keeps its value; --no-origins empties the list.
    kept = json.loads(run("offerwall", "wall", owid, "--no-origins").stdout)
    assert kept["title"] == "Gem Rewards" and kept["origins"] == []
    bad = run(
        "offerwall",
        "wall",
        owid,
        *("--accent", "teal", "--origin", "https://games.example.com/play"),
        check=False,
    )
    assert bad.returncode != 0
    assert "hex colour" in bad.stderr and "leave out the path" in bad.stderr
    assert json.loads(run("offerwall", "wall", owid).stdout) == kept


def test_offerwall_resume_releases_a_paused_offerwalls_postbacks(run, env):
    from datetime import timedelta

    from sqlmodel import Session

    from api.core.crypto import SecretBox
    from api.core.db import build_engine, write_session
    from models import Offerwall, Postback
    from models.types import utcnow
    from tests.factories import make_postback

    run("migrate")
    created = json.loads(run("offerwall", "create", "Paused Wall").stdout)
    run("offerwall", "approve", created["id"])
    flowing = run("offerwall", "resume", created["id"], check=False)
    assert flowing.returncode != 0 and "not paused" in flowing.stderr
    engine = build_engine(env["DATABASE_URL"])
    with Session(engine) as session:
        wall = session.get(Offerwall, created["id"])
    postback_id = make_postback(engine, SecretBox([env["SECRET_KEY"]]), wall)
    with write_session(engine) as session:  # paused as the dispatcher pauses it
        wall = session.get(Offerwall, created["id"])
        wall.deliveries_paused_at = utcnow()
        wall.failing_since, wall.consecutive_failures = utcnow() - timedelta(days=1), 9
    assert _listed(run, created["id"])["deliveriesPausedAt"] is not None
    resumed = json.loads(run("offerwall", "resume", created["id"]).stdout)
    assert (resumed["offerwallId"], resumed["released"]) == (created["id"], 1)
    assert _listed(run, created["id"])["deliveriesPausedAt"] is None
    with Session(engine) as session:
        postback = session.get(Postback, postback_id)
        assert (postback.status, postback.attempts) == ("pending", 0)
    engine.dispose()


def _listed(run, offerwall_id: str) -> dict:
    return next(w for w in json.loads(run("offerwall", "list").stdout) if w["id"] == offerwall_id)


def test_offerwall_reject_needs_a_reason_as_in_the_portal(run):
    run("migrate")
    created = json.loads(run("offerwall", "create", "Shady Clicks").stdout)
    missing = run("offerwall", "reject", created["id"], check=False)
    assert missing.returncode != 0 and "--reason" in missing.stderr
    blank = run("offerwall", "reject", created["id"], "--reason", "  ", check=False)
    # The portal's reject dialog shows this same message (offerwalls.rejection_reason_problem).
    assert blank.returncode != 0 and "Give the publisher a reason" in blank.stderr
    assert _listed(run, created["id"])["status"] == "pending"
    rejected = json.loads(
        run("offerwall", "reject", created["id"], "--reason", " No games on the site. ").stdout
    )
    assert (rejected["status"], rejected["rejectionReason"]) == (
        "rejected",
        "No games on the site.",
    )


def test_offerwall_approve_from_the_cli_clears_the_rejection_reason(run):
    run("migrate")
    created = json.loads(run("offerwall", "create", "Second Try").stdout)
    run("offerwall", "reject", created["id"], "--reason", "Incomplete website.")
    run("offerwall", "approve", created["id"])
    listed = _listed(run, created["id"])
    assert (listed["status"], listed["rejectionReason"]) == ("approved", None)


def test_offerwall_cli_refuses_the_steps_the_portal_refuses(run):
    run("migrate")
    created = json.loads(run("offerwall", "create", "Early Wall").stdout)
    suspend = run("offerwall", "suspend", created["id"], check=False)
    assert suspend.returncode != 0
    assert "This offerwall is pending: only one that is approved can be suspended" in (
        suspend.stderr
    )
    run("offerwall", "approve", created["id"])
    run("offerwall", "suspend", created["id"])
    approve = run("offerwall", "approve", created["id"], check=False)
    assert approve.returncode != 0 and "This offerwall is suspended" in approve.stderr
    assert _listed(run, created["id"])["status"] == "suspended"


def test_offerwall_set_postback_sets_the_reversal_url_as_the_portal_does(run):
    run("migrate")
    wall = json.loads(run("offerwall", "create", "Reversals Wall").stdout)["id"]
    url = "https://pub.example/pb?tx={transaction_id}"
    reversal = "https://pub.example/rev?tx={transaction_id}&why={reason}"
    saved = json.loads(
        run("offerwall", "set-postback", wall, url, "--reversal-url", reversal).stdout
    )
    assert (saved["postbackUrl"], saved["reversalUrl"]) == (url, reversal)
    # Without the option the reversal URL stays; an empty one sends reversals to the URL.
    run("offerwall", "set-postback", wall, url + "&v=2")
    assert _listed(run, wall)["reversalUrl"] == reversal
    run("offerwall", "set-postback", wall, url, "--reversal-url", "")
    assert _listed(run, wall)["reversalUrl"] is None
    # The portal's check, and nothing saved when it refuses.
    bad = run(
        "offerwall", "set-postback", wall, url + "&v=3", "--reversal-url", "ftp://x", check=False
    )
    assert bad.returncode != 0
    assert "the reversal URL must be an http(s) URL" in bad.stderr
    assert _listed(run, wall)["postbackUrl"] == url


def test_import_list_and_deactivate_offers(run, tmp_path):
    from models.offer_schemas import RuleIn

    run("migrate")
    game = json.loads(run("game", "create", "Arena").stdout)
    example = (ROOT / "docs" / "missions.example.yaml").read_text()
    path = tmp_path / "offers.yaml"
    path.write_text(example.replace("REPLACE-WITH-YOUR-GAME-ID", game["gameId"]))
    imported = json.loads(run("offers", "import", str(path)).stdout)
    assert [m["title"] for m in imported["missions"]][:2] == [
        "Kill 10 players in one game",
        "Score 1000+ in 3 matches in a row",
    ]
    assert len(imported["missions"]) == 19  # one of each richer kind, and live operations
    assert [q["name"] for q in imported["quests"]] == ["Season opener"]
    listed = json.loads(run("offers", "list", "--game", game["gameId"]).stdout)
    assert len(listed["missions"]) == 22 and len(listed["quests"]) == 1
    assert [(p["name"], p["size"], p["gameId"]) for p in listed["pools"]] == [
        ("daily-pvp", 2, game["gameId"])
    ]
    # Each rule reads back as it was written (a ladder's completes at its last stage).
    written = {
        m["title"]: RuleIn.model_validate(m["rule"])
        for m in yaml.safe_load(example)["missions"]
        if "stages" not in m
    }
    read = {m["title"]: m["rule"] for m in listed["missions"]}
    assert {title: RuleIn.model_validate(read[title]) for title in written} == written
    assert read["Kill ladder"]["completion"]["threshold"] == 100
    streak = read["A 7-day streak"]
    assert streak["completion"]["timeZone"] == "Europe/Berlin" and streak["event"] == "START_GAME"
    assert read["Kill 10 players or bosses"]["anyOf"][1]["event"] == "KILL_NPC"
    kills = next(m for m in listed["missions"] if m["title"].startswith("Kill"))
    score = next(m for m in listed["missions"] if m["title"].startswith("Score"))
    assert (score["minCompletionSeconds"], score["maxTraitField"], score["fraudActions"]) == (
        900,
        "score",
        {"hosting_network": "refuse", "multi_offerwall": "hold"},
    )
    assert kills["rule"]["conditions"] == [{"field": "traits.kills", "op": ">=", "value": 10.0}]
    run("offers", "deactivate", "mission", kills["id"])
    listed = json.loads(run("offers", "list").stdout)
    assert not next(m for m in listed["missions"] if m["id"] == kills["id"])["isActive"]
    run("offers", "activate", "mission", kills["id"])
    # Importing again with ids updates instead of duplicating.
    json_path = tmp_path / "update.json"
    json_path.write_text(
        json.dumps(
            {
                "gameId": game["gameId"],
                "missions": [
                    {
                        "id": kills["id"],
                        "title": "Kill 12",
                        "payout": 2,
                        "destinationUrl": "https://g.example/",
                        "rule": {
                            "event": "GAME_END",
                            "conditions": [{"field": "traits.kills", "op": ">=", "value": 12}],
                        },
                    }
                ],
            }
        )
    )
    run("offers", "import", str(json_path))
    listed = json.loads(run("offers", "list").stdout)
    assert len(listed["missions"]) == 22
    assert next(m for m in listed["missions"] if m["id"] == kills["id"])["title"] == "Kill 12"


def test_import_reports_what_is_wrong(run, tmp_path):
    run("migrate")
    game = json.loads(run("game", "create", "Arena").stdout)
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {
                "gameId": game["gameId"],
                "missions": [
                    {
                        "title": "x",
                        "payout": -1,
                        "destinationUrl": "ftp://nope",
                        "rule": {
                            "event": "bad name",
                            "conditions": [{"field": "traits.w", "op": ">", "value": "bow"}],
                        },
                    }
                ],
            }
        )
    )
    result = run("offers", "import", str(path), check=False)
    assert result.returncode != 0
    for fragment in ("missions.0.payout", "missions.0.destinationUrl", "missions.0.rule"):
        assert fragment in result.stderr


def test_offerwall_approve_and_reject_from_the_cli_mail_the_publisher(run, env, monkeypatch):
    from api.core.config import get_settings
    from api.core.db import get_engine, write_session
    from api.publishers import signup_publisher
    from tests.smtp import smtp_server, text_of

    run("migrate")
    with write_session(get_engine()) as session:
        for company in ("Mailed Wall", "Refused Wall"):
            slug = company.split()[0].lower()
            signup_publisher(
                session=session,
                company=company,
                website="https://wall.example",
                contact="Ada",
                email=f"{slug}@wall.example",
                password="correct horse battery",
            )
    walls = {w["name"]: w["id"] for w in json.loads(run("offerwall", "list").stdout)}
    with smtp_server() as server:
        monkeypatch.setenv("SMTP_URL", server.url)
        get_settings.cache_clear()
        approved = json.loads(run("offerwall", "approve", walls["Mailed Wall"]).stdout)
        run("offerwall", "reject", walls["Refused Wall"], "--reason", "No games on the site.")
        welcome = server.wait_for("mailed@wall.example")
        refusal = server.wait_for("refused@wall.example")
    assert approved["owid"] in text_of(welcome) and approved["apiKey"] not in text_of(welcome)
    assert "No games on the site." in text_of(refusal)


def _a_conversion(run) -> str:
    """A game's mission, an approved offerwall and one player's conversion through it (as
    the factories make them, in the command's database); its transaction id."""
    from api.core.crypto import get_secret_box
    from api.core.db import get_engine
    from tests.factories import make_conversion, make_mission, make_offerwall

    run("migrate")
    game = json.loads(run("game", "create", "Arena").stdout)
    engine = get_engine()
    mission = make_mission(engine, game["gameId"], title="Win the Castle Siege")
    wall, _ = make_offerwall(engine, get_secret_box(), name="Coins Wall")
    make_conversion(engine, mission_id=mission.id, offerwall=wall, uid="pub-cli")
    [row] = json.loads(run("conversion", "list", "--search", "pub-cli").stdout)["conversions"]
    return row["transactionId"]


def _reversal_postbacks() -> int:
    import sqlalchemy as sa

    from api.core.db import get_engine
    from models.tables import postback

    with get_engine().connect() as conn:
        return conn.execute(
            sa.select(sa.func.count()).where(postback.c.kind == "reversal")
        ).scalar_one()


def test_conversion_reverse_prints_the_reversed_conversion(run):
    tx = _a_conversion(run)
    reversed_ = json.loads(
        run("conversion", "reverse", tx, "--reason", " Chargeback  from the bank. ").stdout
    )
    assert (reversed_["transactionId"], reversed_["status"]) == (tx, "reversed")
    assert (reversed_["reversalReason"], reversed_["reversedBy"]) == (
        "Chargeback from the bank.",
        "cli",
    )
    assert reversed_["reversedAt"] and reversed_["mission"] == "Win the Castle Siege"
    assert (reversed_["publisher"], reversed_["uid"], reversed_["payoutUsd"]) == (
        "Coins Wall",
        "pub-cli",
        "1.50",
    )
    assert _reversal_postbacks() == 1


def test_conversion_reverse_refuses_in_one_line(run):
    tx = _a_conversion(run)
    for args, message in [
        ((tx,), "Missing option '--reason'"),
        ((tx, "--reason", "no"), "Give a reason of 3 to 500 characters."),
        (("not-a-transaction", "--reason", "Chargeback."), "No such conversion."),
    ]:
        refused = run("conversion", "reverse", *args, check=False)
        assert refused.returncode != 0 and message in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    run("conversion", "reverse", tx, "--reason", "Chargeback.")
    again = run("conversion", "reverse", tx, "--reason", "Chargeback again.", check=False)
    assert again.returncode != 0
    assert again.stderr.strip() == "Error: This conversion is already reversed."
    assert _reversal_postbacks() == 1


def test_conversion_list_filters_by_status_and_search(run):
    tx = _a_conversion(run)
    listed = json.loads(run("conversion", "list").stdout)
    assert (listed["total"], listed["page"], listed["pages"]) == (1, 1, 1)
    run("conversion", "reverse", tx, "--reason", "Chargeback.")
    reversed_ = json.loads(run("conversion", "list", "--status", "reversed").stdout)
    assert [c["transactionId"] for c in reversed_["conversions"]] == [tx]
    assert json.loads(run("conversion", "list", "--status", "approved").stdout)["total"] == 0
    by_title = json.loads(run("conversion", "list", "--search", "castle").stdout)
    assert [c["transactionId"] for c in by_title["conversions"]] == [tx]
    assert json.loads(run("conversion", "list", "--search", "nobody").stdout)["total"] == 0
    bad = run("conversion", "list", "--status", "paid", check=False)
    assert bad.returncode != 0 and "'paid' is not one of" in bad.stderr


def test_conversion_list_marks_and_filters_the_test_players_conversions(run):
    import sqlalchemy as sa

    from api.core.db import get_engine, write_session
    from models import Offerwall
    from models.tracking import TEST_UID
    from tests.factories import make_conversion

    real = _a_conversion(run)
    engine = get_engine()
    with write_session(engine) as session:  # the test player's then has a postback
        wall = session.scalars(sa.select(Offerwall).where(Offerwall.name == "Coins Wall")).one()
        wall.test_postbacks = True
    mission = json.loads(run("conversion", "list").stdout)["conversions"][0]["missionId"]
    make_conversion(engine, mission_id=mission, offerwall=wall, uid=TEST_UID)

    def listed(*args: str) -> list[tuple[str, str, bool]]:
        found = json.loads(run("conversion", "list", *args).stdout)["conversions"]
        return [(c["transactionId"], c["uid"], c["test"]) for c in found]

    [(tried, _, _)] = listed("--players", "test")
    assert listed() == [(tried, TEST_UID, True), (real, "pub-cli", False)]
    assert listed("--players", "all") == listed()
    assert listed("--players", "real") == [(real, "pub-cli", False)]
    bad = run("conversion", "list", "--players", "fake", check=False)
    assert bad.returncode != 0 and "'fake' is not one of" in bad.stderr


def test_the_cli_adds_lists_tests_rotates_disables_and_removes_a_webhook(run, monkeypatch):
    """`questwall game webhook …` against a real receiver (docs/game-integration.md#webhooks)."""
    from standardwebhooks.webhooks import Webhook

    from tests.receiver import running_receiver

    monkeypatch.setenv("POSTBACK_ALLOW_PRIVATE", "true")  # the receiver is on 127.0.0.1
    forget_process_settings()
    run("migrate")
    game = json.loads(run("game", "create", "Arena").stdout)["gameId"]
    with running_receiver() as receiver:
        added = json.loads(
            run(
                "game",
                "webhook",
                "add",
                game,
                receiver.url + "/hooks",
                "--events",
                "conversion.approved,mission.completed",
                "--description",
                "badges",
            ).stdout
        )
        assert added["secret"].startswith("whsec_")
        assert added["events"] == ["mission.completed", "conversion.approved"]
        listed = json.loads(run("game", "webhook", "list", game).stdout)
        assert [e["id"] for e in listed] == [added["id"]] and "secret" not in listed[0]
        tested = json.loads(
            run("game", "webhook", "test", added["id"], "--type", "conversion.approved").stdout
        )
        assert tested["delivered"] and tested["statusCode"] == 204
        body = Webhook(added["secret"]).verify(receiver.posts[0], receiver.post_headers[0])
        assert body["type"] == "conversion.approved"
        assert receiver.post_headers[0]["webhook-id"].startswith("test-msg_")
        rotated = json.loads(run("game", "webhook", "rotate-secret", added["id"]).stdout)
        assert rotated["secret"] != added["secret"] and rotated["secretOverlapUntil"]
        run("game", "webhook", "test", added["id"])
        for secret in (added["secret"], rotated["secret"]):  # both sign during the overlap
            Webhook(secret).verify(receiver.posts[1], receiver.post_headers[1])
    # The two messages sent so far were tests (not stored): a real one, replayed.
    from api import webhooks as hooks
    from api.core.db import get_engine, write_session
    from models.types import utcnow

    with write_session(get_engine()) as session:
        hooks.emit(
            session,
            game_id=game,
            player="p1",
            items=[("mission.completed", {"n": 1})],
            now=utcnow(),
        )
    start, end = (utcnow() - timedelta(hours=1)).isoformat(), (utcnow() + timedelta(minutes=1))
    replayed = json.loads(
        run(
            "game",
            "webhook",
            "replay",
            added["id"],
            "--from",
            start,
            "--to",
            end.isoformat(),
            "--type",
            "mission.completed",
        ).stdout
    )
    assert replayed == {"endpointId": added["id"], "queued": 1}
    too_long = run(
        "game",
        "webhook",
        "replay",
        added["id"],
        "--from",
        "2026-01-01T00:00:00Z",
        "--to",
        "2026-02-01T00:00:00Z",
        check=False,
    )
    assert too_long.returncode != 0 and "7 days" in too_long.stderr
    disabled = json.loads(run("game", "webhook", "disable", added["id"]).stdout)
    assert disabled["status"] == "disabled"
    assert json.loads(run("game", "webhook", "enable", added["id"]).stdout)["status"] == "active"
    run("game", "webhook", "remove", added["id"])
    assert json.loads(run("game", "webhook", "list", game).stdout) == []
    refused = run("game", "webhook", "add", game, "ftp://x", check=False)
    assert refused.returncode != 0 and "http and https" in refused.stderr
