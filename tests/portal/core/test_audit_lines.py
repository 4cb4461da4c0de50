"""An audit event as the portal shows it: staff see every actor as recorded; a publisher
or a designer sees their own organisation's accounts in full and anyone else's without
the person (email, address, browser)."""

from __future__ import annotations

from datetime import UTC, datetime

from portal.audit.lines import line_of


def row(**fields) -> dict:
    return {
        "id": 7,
        "at": datetime(2026, 11, 29, 14, 3, 9, tzinfo=UTC),
        "actor_kind": "account",
        "actor_id": "u-1",
        "actor_email": "dee@studio.example",
        "actor_role": "designer",
        "actor_ip": "198.51.100.7",
        "user_agent": "Firefox/140",
        "action": "conversion.rejected",
        "target_type": "conversion",
        "target_id": "tx-1",
        "target_name": "",
        "request_id": "req-1",
        "changes": {"status": ["pending", "rejected"], "note": "x" * 400},
        **fields,
    }


def test_staff_see_the_actor_as_recorded_and_each_change():
    line = line_of(row(), own=None)
    assert (line.who, line.role, line.ip, line.user_agent) == (
        "dee@studio.example",
        "designer",
        "198.51.100.7",
        "Firefox/140",
    )
    assert (line.day, line.time, line.target, line.target_ref) == (
        "2026-11-29",
        "14:03:09 UTC",
        "tx-1",
        "conversion tx-1",
    )
    status, note = line.changes
    assert (status.field, status.before, status.after) == ("status", "pending", "rejected")
    assert note.before == "—" and len(note.after) == 300 and note.after.endswith("…")


def test_staff_see_a_command_by_its_user_and_the_systems_own_decisions_as_such():
    command = line_of(
        row(actor_kind="cli", actor_id=None, actor_email="ops", actor_role=None), own=None
    )
    assert (command.who, command.role) == ("ops", "command line")
    system = line_of(
        row(actor_kind="system", actor_id=None, actor_email=None, actor_role=None, actor_ip=None),
        own=None,
    )
    assert (system.who, system.role, system.ip) == ("Questwall (automatic)", "", "")


def test_others_see_their_own_accounts_in_full_and_no_one_elses_person():
    assert line_of(row(), own=frozenset({"u-1"})).who == "dee@studio.example"
    for fields, who in [
        ({}, "A game studio"),
        ({"actor_role": "staff", "actor_email": "staff@questwall.example"}, "Questwall staff"),
        ({"actor_kind": "cli", "actor_id": None, "actor_role": None}, "Questwall operator"),
        ({"actor_kind": "system", "actor_id": None, "actor_email": None}, "Questwall (automatic)"),
    ]:
        line = line_of(row(**fields), own=frozenset({"u-2"}))
        assert (line.who, line.role, line.ip, line.user_agent) == (who, "", "", "")
