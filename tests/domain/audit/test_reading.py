"""Reading the audit trail: each filter narrows, pages follow one another newest first
without a gap or a repeat, an export holds the same rows as CSV or JSON Lines (never a
secret) and is itself recorded as `audit.exported`; bad filter text is refused by name."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from api import audit
from api.core.db import new_session, write_session
from models import AuditEvent
from tests.factories import make_offerwall, make_studio, make_user

ALICE = audit.account_actor("u-alice", "alice@example.com", "staff", ip="198.51.100.7")
BOB = audit.account_actor("u-bob", "bob@example.com", "designer", ip="2001:db8::1")
DAY = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
_event = AuditEvent.__table__


def put(engine, actor, action, target=("offerwall", "w-1"), *, scope=None, at=None, **changes):
    with audit.acting_as(actor), write_session(engine) as session:
        audit.record(
            session,
            action,
            target_type=target[0],
            target_id=target[1],
            target_name=f"{target[0]} {target[1]}",
            scope=scope,
            changes=changes or None,
            at=at or DAY,
        )


@pytest.fixture
def trail(engine):
    put(engine, ALICE, "offerwall.approved", scope=("offerwall", "w-1"), status=["pending", "ok"])
    put(
        engine,
        BOB,
        "mission.changed",
        ("mission", "m-1"),
        scope=("studio", "s-1"),
        at=DAY + timedelta(days=1),
    )
    put(
        engine,
        ALICE,
        "offerwall.suspended",
        ("offerwall", "w-2"),
        scope=("offerwall", "w-2"),
        at=DAY + timedelta(days=2),
    )
    put(
        engine,
        audit.SYSTEM,
        "conversion.approved",
        ("conversion", "c-1"),
        scope=("offerwall", "w-1"),
        at=DAY + timedelta(days=3),
    )
    put(
        engine,
        BOB,
        "game.renamed",
        ("game", "g-1"),
        scope=("studio", "s-1"),
        at=DAY + timedelta(days=4),
        name=["Old", '=HYPERLINK("x")'],
    )
    return engine


def actions(engine, **text) -> list[str]:
    wanted = audit.filters(**text)
    with new_session(engine) as session:
        return [r["action"] for r in audit.read_page(session, wanted).rows]


def test_no_filter_reads_every_event_newest_first(trail):
    assert actions(trail) == [
        "game.renamed",
        "conversion.approved",
        "offerwall.suspended",
        "mission.changed",
        "offerwall.approved",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ({"actor": "ALICE@example.com"}, ["offerwall.suspended", "offerwall.approved"]),
        ({"actor": "u-bob"}, ["game.renamed", "mission.changed"]),
        ({"action": "offerwall.approved"}, ["offerwall.approved"]),
        ({"action": "offerwall."}, ["offerwall.suspended", "offerwall.approved"]),
        ({"action": "offerwall"}, []),  # an action, exactly: no such action
        ({"target_type": "offerwall"}, ["offerwall.suspended", "offerwall.approved"]),
        ({"target_type": "offerwall", "target_id": "w-2"}, ["offerwall.suspended"]),
        (
            {"scope_type": "offerwall", "scope_id": "w-1"},
            ["conversion.approved", "offerwall.approved"],
        ),
        ({"scope_type": "studio"}, ["game.renamed", "mission.changed"]),
        ({"since": "2026-11-22"}, ["game.renamed", "conversion.approved", "offerwall.suspended"]),
        ({"until": "2026-11-21"}, ["mission.changed", "offerwall.approved"]),  # the day included
        ({"since": "2026-11-21T12:00Z", "until": "2026-11-22T12:00:00+00:00"}, ["mission.changed"]),
        ({"since": "2026-11-21T13:00+01:00", "until": "2026-11-21T12:00:01"}, ["mission.changed"]),
        (
            {"actor": "alice@example.com", "action": "offerwall.", "since": "2026-11-21"},
            ["offerwall.suspended"],
        ),
    ],
)
def test_each_filter_narrows(trail, text, expected):
    assert actions(trail, **text) == expected


def test_about_an_offerwall_is_its_target_and_its_scope(trail):
    wanted = audit.Filters(about=("offerwall", "w-1"))
    with new_session(trail) as session:
        rows = audit.read_page(session, wanted).rows
    assert [r["action"] for r in rows] == ["conversion.approved", "offerwall.approved"]


def test_pages_follow_one_another_without_gap_or_repeat(trail):
    seen, before = [], None
    with new_session(trail) as session:
        while True:
            page = audit.read_page(session, audit.Filters(), before=before, limit=2)
            assert len(page.rows) <= 2
            seen += [r["id"] for r in page.rows]
            if page.older is None:
                break
            before = page.older
    assert seen == sorted(seen, reverse=True) and len(seen) == len(set(seen)) == 5


def test_a_page_is_bounded(trail):
    with new_session(trail) as session:
        assert len(audit.read_page(session, audit.Filters(), limit=0).rows) == 1
        assert len(audit.read_page(session, audit.Filters(), limit=10**9).rows) == 5
    assert audit.MAX_LIMIT == 200


def test_the_security_log_holds_the_accounts_events_and_what_they_did(engine, box):
    studio = make_studio(engine)
    other = make_studio(engine, "Studio B")
    make_user(engine, "dee@example.com", role="designer", studio_id=studio)
    make_user(engine, "eve@example.com", role="designer", studio_id=other)
    with new_session(engine) as session:
        ids = dict(session.execute(sa.text("SELECT email, id FROM portal_user")).all())
    dee = audit.account_actor(ids["dee@example.com"], "dee@example.com", "designer")
    eve = audit.account_actor(ids["eve@example.com"], "eve@example.com", "designer")
    # make_user recorded each account's `account.created`, in its studio's scope.
    put(engine, dee, "mission.changed", ("mission", "m-1"), scope=("studio", studio))
    put(
        engine, eve, "session.started", ("account", ids["eve@example.com"]), scope=("studio", other)
    )
    put(engine, ALICE, "account.disabled", ("account", ids["dee@example.com"]))
    wanted = audit.Filters(accounts_of=("studio", studio))
    with new_session(engine) as session:
        rows = audit.read_page(session, wanted).rows
    assert [r["action"] for r in rows] == ["account.disabled", "mission.changed", "account.created"]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "9999-12-31"}, "until"),  # its day's end is past the calendar's
        ({"since": "0001-01-01T00:00+01:00"}, "since"),
        ({"since": "2026-11-29T25:00"}, "since"),
        ({"until": "2026-13-01"}, "until"),
        ({"since": "2026-11-22", "until": "2026-11-21"}, "since"),
        ({"action": "Offerwall Approved"}, "action"),
        ({"action": "x" * 400}, "action"),
        ({"actor": "a\x00b"}, "actor"),
        ({"target_id": "w-1"}, "target_id"),
        ({"target_type": "offer wall"}, "target_type"),
        ({"scope_type": "planet"}, "scope_type"),
        ({"scope_id": "s-1"}, "scope_id"),
    ],
)
def test_bad_filter_text_is_refused_by_name(text, field):
    with pytest.raises(audit.FilterError) as refused:
        audit.filters(**text)
    assert refused.value.field == field


def test_an_export_holds_the_rows_oldest_first_and_is_recorded(trail):
    wanted = audit.filters(action="offerwall.")
    with audit.acting_as(ALICE):
        made = audit.export(trail, wanted, "jsonl")
    lines = [json.loads(line) for line in made.lines]
    assert made.rows == 2 and made.filename.endswith(".jsonl")
    assert [e["action"] for e in lines] == ["offerwall.approved", "offerwall.suspended"]
    assert lines[0]["changes"] == {"status": ["pending", "ok"]}
    assert lines[0]["at"] == "2026-11-20T12:00:00.000000Z"
    assert set(lines[0]) == set(audit.reading.COLUMNS)
    with new_session(trail) as session:
        [recorded] = audit.read_page(session, audit.filters(action="audit.exported")).rows
    assert recorded["actor_email"] == "alice@example.com"
    assert recorded["changes"] == {
        "filters": [None, {"action": "offerwall."}],
        "format": [None, "jsonl"],
        "rows": [None, 2],
    }
    assert audit.verify(trail).broken_at is None


def test_a_csv_export_has_the_changes_as_json_and_no_formula(trail):
    put(trail, ALICE, "offerwall.renamed", ("offerwall", "=1+1"), at=DAY + timedelta(days=5))
    made = audit.export(trail, audit.Filters(), "csv")
    table = list(csv.DictReader(io.StringIO("".join(made.lines))))
    assert made.rows == len(table) == 6
    assert table[0]["at"] == "2026-11-20T12:00:00.000000Z"
    renamed = table[4]
    assert renamed["action"] == "game.renamed"
    assert json.loads(renamed["changes"]) == {"name": ["Old", '=HYPERLINK("x")']}
    assert renamed["actor_ip"] == "2001:db8::1" and len(renamed["hash"]) == 64
    assert table[5]["target_id"] == "'=1+1"  # a spreadsheet shows it, never runs it


def test_an_export_made_later_does_not_hold_events_after_it_was_made(trail):
    made = audit.export(trail, audit.Filters(), "jsonl")
    put(trail, ALICE, "offerwall.reinstated", ("offerwall", "w-2"))
    assert made.rows == len(list(made.lines)) == 5


def test_no_secret_value_in_any_export(engine, box):
    _wall, key = make_offerwall(engine, box)
    with write_session(engine) as session:
        audit.record(
            session,
            "test.leaky",
            target_type="test",
            target_id=1,
            changes={"api_key": [None, key], "password": ["a-password", "b-password"]},
        )
    for fmt in audit.FORMATS:
        text = "".join(audit.export(engine, audit.Filters(), fmt).lines)
        assert key and key not in text and "a-password" not in text and audit.REDACTED in text
        with new_session(engine) as session:
            stored = session.execute(sa.select(_event.c.changes)).scalars().all()
        assert key not in json.dumps(stored)


def test_an_unknown_format_is_refused_before_anything_is_recorded(trail):
    with pytest.raises(ValueError):
        audit.export(trail, audit.Filters(), "xlsx")
    assert actions(trail, action="audit.exported") == []
