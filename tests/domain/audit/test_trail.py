"""The audit trail: an event per change, by the actor who made it, with each value before
and after and never a secret; rows the database refuses to change or delete; a SHA-256
chain that `verify` checks, names the first altered row of, and still checks after the
retention prune."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import DBAPIError

from api import audit
from api.core.db import write_session
from api.publishers import offerwalls
from models import AuditEvent, Offerwall, Postback
from models.types import utcnow
from tests.databases import only_postgres
from tests.factories import make_offerwall, make_postback

STAFF = audit.account_actor(
    "u-1", "staff@example.com", "staff", ip="198.51.100.7", user_agent="Firefox/140"
)
_event = AuditEvent.__table__


def events(engine) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(_event).order_by(_event.c.id)).mappings().all()
    return [dict(row) for row in rows]


def note(engine, n: int, *, at=None) -> None:
    with write_session(engine) as session:
        for i in range(n):
            audit.record(
                session,
                "test.noted",
                target_type="test",
                target_id=i,
                changes={"n": [i, i + 1]},
                at=at,
            )


def test_offerwall_changes_are_recorded_once_each_with_actor_and_before_after(engine, box):
    wall, _ = make_offerwall(engine, box, approve=False)
    with audit.acting_as(STAFF), write_session(engine) as session:
        current = session.get(Offerwall, wall.id)
        issued = offerwalls.approve(session=session, box=box, offerwall=current)
        offerwalls.set_postback_url(
            session=session, offerwall=current, url="https://pub.example/pb?tx={transaction_id}"
        )
        offerwalls.set_postback_url(  # the same URL again: nothing changed, nothing recorded
            session=session, offerwall=current, url="https://pub.example/pb?tx={transaction_id}"
        )
        rotated = offerwalls.rotate_key(session=session, box=box, offerwall=current, grace="1h")
        offerwalls.suspend(session=session, offerwall=current)
    found = [e for e in events(engine) if e["action"] != "offerwall.created"]
    assert [e["action"] for e in found] == [
        "offerwall.approved",
        "offerwall.postback_url_changed",
        "offerwall.api_key_rotated",
        "offerwall.suspended",
    ]
    approved, url, rotation, suspended = found
    assert approved["changes"] == {"status": ["pending", "approved"]}
    assert url["changes"] == {"postback_url": [None, "https://pub.example/pb?tx={transaction_id}"]}
    assert rotation["changes"] == {"grace": [None, "1h"]}
    assert suspended["changes"] == {"status": ["approved", "suspended"]}
    for event in found:
        assert (event["actor_kind"], event["actor_email"], event["actor_role"]) == (
            "account",
            "staff@example.com",
            "staff",
        )
        assert (event["actor_ip"], event["user_agent"]) == ("198.51.100.7", "Firefox/140")
        assert (event["target_type"], event["target_id"]) == ("offerwall", wall.id)
        assert (event["scope_type"], event["scope_id"]) == ("offerwall", wall.id)
        assert event["target_name"] == wall.name
    text = json.dumps(found, default=str)
    assert issued.api_key not in text and rotated.api_key not in text


def test_without_an_actor_the_system_acted():
    assert audit.current_actor() == audit.SYSTEM
    with audit.acting_as(audit.cli_actor()) as actor:
        assert audit.current_actor() == actor and actor.kind == "cli" and actor.email


def test_fields_that_look_secret_are_redacted_whatever_the_caller_passed(engine):
    with write_session(engine) as session:
        audit.record(
            session,
            "test.leaky",
            target_type="test",
            target_id=1,
            changes={
                "signing_secret": ["old-secret", "new-secret"],
                "API_KEY": ["qw_ak_1", "qw_ak_2"],
                "password_hash": ["$argon2id$a", "$argon2id$b"],
                "currency": ["USD", "EUR"],
            },
        )
    [event] = events(engine)
    assert event["changes"] == {
        "signing_secret": [audit.REDACTED, audit.REDACTED],
        "API_KEY": [audit.REDACTED, audit.REDACTED],
        "password_hash": [audit.REDACTED, audit.REDACTED],
        "currency": ["USD", "EUR"],
    }


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_event SET action = 'test.hidden'",
        "DELETE FROM audit_event",
    ],
)
def test_the_database_refuses_to_change_or_delete_an_event(engine, statement):
    note(engine, 2)
    with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
        conn.exec_driver_sql(statement)
    assert [e["action"] for e in events(engine)] == ["test.noted", "test.noted"]


@only_postgres  # TRUNCATE is PostgreSQL's; SQLite has only DELETE
def test_postgresql_refuses_a_truncate_too(engine):
    note(engine, 1)
    with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
        conn.exec_driver_sql("TRUNCATE audit_event")


def altered(engine, event_id: int) -> None:
    """Change a row behind the triggers' back, as someone with the database's keys could."""
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
            conn.exec_driver_sql(
                f"UPDATE audit_event SET target_name = 'someone else' WHERE id = {event_id}"
            )
        else:
            conn.exec_driver_sql("DROP TRIGGER audit_event_no_update")
            conn.exec_driver_sql(
                f"UPDATE audit_event SET target_name = 'someone else' WHERE id = {event_id}"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER audit_event_no_update BEFORE UPDATE ON audit_event "
                "BEGIN SELECT RAISE(ABORT, 'audit_event is append-only'); END"
            )


def test_verify_passes_then_names_the_first_altered_row(engine):
    note(engine, 5)
    checked = audit.verify(engine)
    assert (checked.rows, checked.broken_at) == (5, None)
    assert checked.last_hash == events(engine)[-1]["hash"]
    third = events(engine)[2]["id"]
    altered(engine, third)
    broken = audit.verify(engine)
    assert broken.broken_at == third and "content" in broken.why


def test_pruning_the_oldest_events_keeps_the_chain_checkable(engine):
    note(engine, 3, at=utcnow() - timedelta(days=500))
    note(engine, 2)
    assert audit.prune(engine, keep_days=400) == 3
    left = events(engine)
    assert [e["changes"]["n"] for e in left] == [[0, 1], [1, 2]]
    assert audit.verify(engine) == audit.Verified(2, None, "", left[-1]["hash"])
    note(engine, 1)  # and the chain goes on from there
    assert audit.verify(engine).rows == 3 and audit.verify(engine).broken_at is None
    assert audit.prune(engine, keep_days=400) == 0
    with pytest.raises(DBAPIError, match="append-only"), engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM audit_event")  # the permit ended with the prune


def test_a_command_is_recorded_as_the_system_user_who_ran_it_and_verify_says_so(
    engine, box, db_url, tmp_path
):
    import getpass

    from tests.api.live_server import server_env
    from tests.live import cli, run_cli

    wall, _ = make_offerwall(engine, box, approve=False)
    env = server_env(db_url, tmp_path)
    cli(env, "offerwall", "approve", wall.id)
    created, event = events(engine)
    assert created["action"] == "offerwall.created"
    assert (event["action"], event["actor_kind"]) == ("offerwall.approved", "cli")
    assert event["actor_email"] == getpass.getuser()
    listed = cli(env, "audit", "list", "--action", "offerwall.approved", "--json")
    assert json.loads(listed)["action"] == "offerwall.approved"
    checked = cli(env, "audit", "verify")
    assert f"2 event(s) chain as recorded. Last hash: {event['hash']}" in checked
    altered(engine, event["id"])
    refused = run_cli(env, "audit", "verify")
    assert refused.returncode == 1
    assert f"Row {event['id']} does not match" in refused.stderr


def conversion_of(engine, postback_id: int) -> tuple[int, str]:
    from models import Conversion, Postback

    with write_session(engine) as session:
        postback = session.get(Postback, postback_id)
        conversion = session.get(Conversion, postback.conversion_id)
        return conversion.id, conversion.transaction_id


@pytest.fixture
def wall(engine, box):
    return make_offerwall(engine, box)


def test_a_reversal_a_bulk_approval_and_payout_rules_are_recorded(engine, box, wall):
    from api.conversions import ledger, review
    from api.economics import payout_rules
    from models import Conversion, ConversionStatus

    offerwall = wall[0]
    reversed_id, reversed_tx = conversion_of(engine, make_postback(engine, box, offerwall))
    held = [conversion_of(engine, make_postback(engine, box, offerwall)) for _ in range(3)]
    with write_session(engine) as session:  # three held for review: no postback yet
        ids = [i for i, _ in held]
        session.execute(
            sa.delete(Postback.__table__).where(Postback.__table__.c.conversion_id.in_(ids))
        )
        session.execute(
            sa.update(Conversion.__table__)
            .where(Conversion.__table__.c.id.in_(ids))
            .values(status=ConversionStatus.PENDING)
        )
    before = len(events(engine))  # the offerwall's approval, by the system
    with audit.acting_as(STAFF), write_session(engine) as session:
        ledger.reverse(
            session=session,
            transaction_id=reversed_tx,
            reason="chargeback from the store",
            actor="staff@example.com",
            studio_id=None,
        )
        approved = review.approve(
            session=session,
            transaction_ids=[tx for _, tx in held],
            actor="staff@example.com",
            studio_id=None,
        )
        payout_rules.set_share(session, offerwall.id, 40, by="staff@example.com")
        payout_rules.set_share(session, offerwall.id, 35, by="staff@example.com")
        payout_rules.remove(session, offerwall.id)
    assert approved.decided == 3
    found = events(engine)[before:]
    assert [e["action"] for e in found] == [
        "conversion.reversed",
        "conversion.approved",
        "conversion.approved",
        "conversion.approved",
        "payout_rule.changed",
        "payout_rule.changed",
        "payout_rule.removed",
    ]
    reversal, *approvals, first, second, removed = found
    assert (reversal["target_id"], reversal["target_name"]) == (str(reversed_id), reversed_tx)
    assert reversal["changes"] == {
        "status": ["approved", "reversed"],
        "reversal_reason": [None, "chargeback from the store"],
    }
    assert sorted(e["target_name"] for e in approvals) == sorted(tx for _, tx in held)
    assert all(e["changes"]["status"] == ["pending", "approved"] for e in approvals)
    assert first["changes"] == {"share_percent": [None, 40.0]}
    assert second["changes"] == {"share_percent": [40.0, 35.0]}
    assert removed["changes"] == {"share_percent": [35.0, None]}
    assert all(
        e["scope_id"] == offerwall.id and e["actor_email"] == "staff@example.com" for e in found
    )
    assert audit.verify(engine).broken_at is None


def test_the_worker_approving_held_conversions_is_the_system(engine, box, wall):
    from api.conversions import review
    from models import Conversion, ConversionStatus

    conversion_id, _ = conversion_of(engine, make_postback(engine, box, wall[0]))
    with write_session(engine) as session:
        session.execute(
            sa.delete(Postback.__table__).where(Postback.__table__.c.conversion_id == conversion_id)
        )
        session.execute(
            sa.update(Conversion.__table__)
            .where(Conversion.__table__.c.id == conversion_id)
            .values(status=ConversionStatus.PENDING, review_due_at=utcnow() - timedelta(hours=1))
        )
    assert review.auto_approve(engine) == 1
    [event] = [e for e in events(engine) if e["action"].startswith("conversion.")]
    assert (event["action"], event["actor_kind"], event["actor_email"]) == (
        "conversion.approved",
        "system",
        None,
    )
