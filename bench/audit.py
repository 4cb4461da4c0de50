"""What the audit trail costs: a signed-in portal action, and a bulk approval of 1,000 held
conversions, each timed with its audit events recorded and with recording switched off
(the same work, the trail's writer replaced by one that writes nothing), in alternating
rounds on the same database.

    .venv/bin/python bench/audit.py [--actions 300] [--held 1000] [--rounds 5]
        [--database-url URL]

The portal action is what a publisher's "Save" of their currency does on the server: the
session token resolved to its account, then one write transaction that changes the
offerwall and records the change (`offerwall.currency_changed`). The bulk approval is
`review.approve` over 1,000 held conversions, 500 per decision (the most one decision
names), each conversion's postback queued and its event recorded (`conversion.approved`).
Figures: the median time of each, on and off, and the difference.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api import audit
from api.accounts import sessions as accounts
from api.accounts.access import account_for
from api.accounts.throttle import IpThrottle
from api.audit import trail
from api.conversions import review
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, write_session
from api.missions import offers
from api.publishers import offerwalls
from api.studios import games
from api.tracking import ClickIn, record_click
from bench.common import add_target_arguments, emit, is_postgres, temp_dir, throwaway_database
from models import AuditEvent, Offerwall, Role
from models.offer_schemas import MissionIn
from models.tables import conversion as _conversion
from models.tables import progress as _progress
from models.types import new_uuid, utcnow

_event = AuditEvent.__table__  # type: ignore[attr-defined]
BOX = SecretBox(["bench-master-key-not-for-production"])
PASSWORD = "a bench password, long enough"


class _Countries:
    def country(self, ip: str) -> str | None:
        return "US"


@contextmanager
def recording(on: bool) -> Iterator[None]:
    """Audit events recorded (on), or the trail's writer replaced by one that writes
    nothing (off)."""
    real = trail.record_all
    if not on:  # every caller's name for it: the package's and the module's
        audit.record_all = trail.record_all = lambda session, entries, **_: ""  # type: ignore[assignment]
    try:
        yield
    finally:
        audit.record_all = trail.record_all = real  # type: ignore[assignment]


def seed(engine: sa.Engine) -> tuple[str, str, str, str]:
    """A publisher account signed in (its session token), its offerwall, a game's mission
    and one player's click on it: (token, offerwall id, mission id, progress id...)."""
    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name="Bench Wall")
        offerwalls.approve(session=session, box=BOX, offerwall=wall)
        accounts.create_user(
            session=session,
            email="publisher@bench.example",
            password=PASSWORD,
            role=Role.PUBLISHER,
            offerwall_id=wall.id,
        )
        game = games.create_game(session=session, box=BOX, name="Bench Game")
        mission = offers.save_mission(
            session=session,
            game_id=game.game_id,
            data=MissionIn.model_validate(
                {
                    "title": "Win once",
                    "payout": "1.00",
                    "destinationUrl": "https://game.example/play",
                    "rule": {"event": "WIN", "completion": {"kind": "count", "threshold": 1}},
                }
            ),
        )
        owid, wall_id, mission_id = wall.owid, wall.id, mission.id
    signed = accounts.sign_in(
        engine=engine,
        box=BOX,
        email="publisher@bench.example",
        password=PASSWORD,
        client_ip="127.0.0.1",
        ip_throttle=IpThrottle(),
    )
    click = ClickIn(
        kind="mission",
        offer_id=mission_id,
        owid=owid,
        uid="bench-player",
        clickid="bench",
        subs=(None, None, None),
        ip="203.0.113.7",
        user_agent="bench",
    )
    record_click(engine=engine, click=click, countries=_Countries())
    return signed.token, wall_id, mission_id, owid


def portal_action(engine: sa.Engine, token: str, wall_id: str, n: int) -> float:
    """Seconds of one "Save currency" as the portal runs it: account, then the write."""
    started = time.perf_counter()
    account = account_for(engine=engine, token=token)
    assert account is not None
    actor = audit.account_actor(account.id, account.email, account.role, ip="127.0.0.1")
    with audit.acting_as(actor), write_session(engine) as session:
        offerwalls.set_currency(
            session=session,
            offerwall=session.get(Offerwall, wall_id),
            name="Gems",
            code="GEM",
            exchange_rate=100 + n,  # a change each time: each is an event
            decimals=0,
        )
    return time.perf_counter() - started


def held_conversions(engine: sa.Engine, wall_id: str, mission_id: str, count: int) -> list[str]:
    """`count` conversions of the bench player, held for review; their transaction ids."""
    with engine.begin() as conn:
        progress = conn.execute(
            sa.select(_progress).where(_progress.c.mission_id == mission_id)
        ).first()
        first = conn.execute(
            sa.select(sa.func.coalesce(sa.func.max(_conversion.c.sequence), 0))
        ).scalar_one()
        rows = [
            {
                "transaction_id": new_uuid(),
                "progress_id": progress.id,
                "sequence": first + 1 + i,
                "mission_id": mission_id,
                "platform_user_id": progress.platform_user_id,
                "offerwall_id": wall_id,
                "click_id": progress.click_id,
                "payout_micros": 1_000_000,
                "created_at": utcnow(),
                "status": "pending",
                "review_due_at": utcnow(),
            }
            for i in range(count)
        ]
        conn.execute(_conversion.insert(), rows)
    return [row["transaction_id"] for row in rows]


def bulk_approval(engine: sa.Engine, transaction_ids: list[str]) -> float:
    staff = audit.account_actor("bench-staff", "staff@bench.example", "staff", ip="127.0.0.1")
    started = time.perf_counter()
    for at in range(0, len(transaction_ids), review.MAX_AT_ONCE):
        with audit.acting_as(staff), write_session(engine) as session:
            review.approve(
                session=session,
                transaction_ids=transaction_ids[at : at + review.MAX_AT_ONCE],
                actor="staff@bench.example",
                studio_id=None,
            )
    return time.perf_counter() - started


def alternate(rounds: int, run: Callable[[bool], float]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"on": [], "off": []}
    for r in range(rounds):
        for on in (True, False) if r % 2 == 0 else (False, True):
            with recording(on):
                times["on" if on else "off"].append(run(on))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=300, help="portal actions per round")
    parser.add_argument("--held", type=int, default=1000, help="held conversions approved")
    parser.add_argument("--rounds", type=int, default=5)
    add_target_arguments(parser)
    args = parser.parse_args()
    data = temp_dir()
    try:
        run(args, data)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def run(args: argparse.Namespace, data: Path) -> None:
    with throwaway_database(args.database_url, data) as url:
        migrate(url)
        engine = build_engine(url)
        token, wall_id, mission_id, _ = seed(engine)
        counter = iter(range(10**9))

        def actions(on: bool) -> float:
            return statistics.median(
                portal_action(engine, token, wall_id, next(counter)) for _ in range(args.actions)
            )

        def approvals(on: bool) -> float:
            held = held_conversions(engine, wall_id, mission_id, args.held)
            return bulk_approval(engine, held)

        portal_action(engine, token, wall_id, next(counter))  # warm up
        action = alternate(args.rounds, actions)
        approval = alternate(args.rounds, approvals)
        with engine.connect() as conn:  # what the rounds on recorded: one per conversion
            approved_events = conn.execute(
                sa.select(sa.func.count()).where(_event.c.action == "conversion.approved")
            ).scalar_one()
        engine.dispose()
    on, off = statistics.median(action["on"]), statistics.median(action["off"])
    a_on, a_off = statistics.median(approval["on"]), statistics.median(approval["off"])
    where = "PostgreSQL" if is_postgres(args.database_url) else "SQLite"
    print(f"Audit trail on {where} (in process), medians of {args.rounds} alternating rounds:")
    print(
        f"  signed-in portal action (save currency): {on * 1e3:.2f} ms recorded, "
        f"{off * 1e3:.2f} ms without; recording costs {(on - off) * 1e3:+.2f} ms "
        f"({100 * (on - off) / off:+.1f}%)"
    )
    print(
        f"  bulk approval of {args.held} held conversions: {a_on * 1e3:.0f} ms recorded, "
        f"{a_off * 1e3:.0f} ms without; recording costs {(a_on - a_off) * 1e3:+.0f} ms "
        f"({100 * (a_on - a_off) / a_off:+.1f}%, {1e6 * (a_on - a_off) / args.held:+.0f} µs "
        "per conversion)"
    )
    emit(
        "audit",
        {
            "action_ms_recorded": round(on * 1e3, 3),
            "action_ms_without": round(off * 1e3, 3),
            "approval_ms_recorded": round(a_on * 1e3, 1),
            "approval_ms_without": round(a_off * 1e3, 1),
            "held": args.held,
            "rounds": args.rounds,
            "approved_events": approved_events,
        },
    )


if __name__ == "__main__":
    main()
