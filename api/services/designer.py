"""What the portal's mission editor and rule tester need: the editor's saves, the rule
tester's event-by-event run, the offer preview, the game's offers and its event names.

Forms become definitions in `offer_forms.py`, and are saved by `offers.py` like import
files: the portal adds no rules of its own."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.services import offers
from api.services.offer_forms import FormError, from_form, scalar
from api.services.offer_listing import mission_doc, quest_doc
from api.services.rules import Rule, RuleError, Tally, plain_number, step
from models import Event, Mission, Quest
from models.offer_schemas import MissionIn, QuestFields, RuleIn, mission_in, quest_fields

MAX_TEST_EVENTS = 500


def save_mission_form(
    *, session: Session, game_id: str, form: Mapping[str, str], mission_id: str | None
) -> Mission:
    """The editor's save: the game's mission (or a new one) with the form over it."""
    stored = (
        offers.mission_of_game(session=session, game_id=game_id, mission_id=mission_id)
        if mission_id
        else None
    )
    data = from_form(MissionIn, form, stored=mission_in(stored) if stored else None)
    return offers.save_mission(session=session, game_id=game_id, data=data)


def save_quest_form(
    *,
    session: Session,
    game_id: str,
    form: Mapping[str, str],
    quest_id: str | None,
    mission_ids: list[str],
) -> Quest:
    """The quest builder's save: the game's quest (or a new one) with the form over it,
    made of the chosen missions in order."""
    stored = (
        offers.quest_of_game(session=session, game_id=game_id, quest_id=quest_id)
        if quest_id
        else None
    )
    data = from_form(QuestFields, form, stored=quest_fields(stored) if stored else None)
    return offers.save_quest(session=session, game_id=game_id, data=data, mission_ids=mission_ids)


def rule_from_form(form: Mapping[str, str]) -> Rule:
    """The rule builder's inputs (`rule.…`) as the engine's rule (for the tester)."""
    rule = from_form(RuleIn, form, root="rule")
    try:
        return Rule.from_input(rule)
    except RuleError as exc:
        raise FormError({"rule": str(exc)}) from None


# --- the rule tester ----------------------------------------------------------------


@dataclass(frozen=True)
class RuleStep:
    n: int
    event: str
    value: str
    traits: str
    outcome: str  # "other event" | "passes" | "fails the filter"
    count: int
    run: int
    total: str
    completed: bool


def parse_events(text: str) -> list[dict[str, Any]]:
    """Events to test, one per line: a JSON object ({"event": …, "value": …, "traits": …})
    or the short form `EVENT [value] [trait=value …]`, e.g. `GAME_OVER 1200 mode=ranked`."""
    events: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormError({"events": f"line {number}: not JSON ({exc.msg})"}) from None
            if not isinstance(event, dict) or not isinstance(event.get("event"), str):
                raise FormError({"events": f'line {number}: an object with "event" is needed'})
        else:
            name, *rest = line.split()
            event = {"event": name}
            for part in rest:
                if "=" in part:
                    key, _, raw = part.partition("=")
                    event.setdefault("traits", {})[key] = scalar(raw)
                elif "value" not in event:
                    value = scalar(part)
                    if isinstance(value, str | bool):
                        raise FormError({"events": f"line {number}: the value is a number"})
                    event["value"] = value
                else:
                    raise FormError({"events": f"line {number}: write traits as name=value"})
        events.append(event)
        if len(events) > MAX_TEST_EVENTS:
            raise FormError({"events": f"at most {MAX_TEST_EVENTS} events per test"})
    if not events:
        raise FormError({"events": "write at least one event"})
    return events


def try_rule(rule: Rule, events: list[dict[str, Any]], *, repeatable: bool) -> list[RuleStep]:
    """Each event through the engine (the same `step` ingestion uses), with the tally after
    it; a repeatable mission starts again from zero after a completion."""
    tally, steps = Tally(), []
    for n, event in enumerate(events, start=1):
        outcome = step(rule, tally, event)
        tally = outcome.tally
        steps.append(
            RuleStep(
                n=n,
                event=str(event.get("event")),
                value="" if event.get("value") is None else f"{event['value']:g}",
                traits=", ".join(f"{k}={v}" for k, v in (event.get("traits") or {}).items()),
                outcome=(
                    "other event"
                    if not outcome.matched
                    else "passes"
                    if outcome.passed
                    else "fails the filter"
                ),
                count=tally.count,
                run=tally.run,
                total=f"{tally.total:g}",
                completed=outcome.completed,
            )
        )
        if outcome.completed:
            if not repeatable:
                break
            tally = Tally()
    return steps


# --- suggestions and previews --------------------------------------------------------


def event_names(*, session: Session, game_id: str, limit: int = 50) -> list[str]:
    """The event names the game has sent, most frequent first (for the editor)."""
    found = session.execute(
        sa.select(col(Event.name))
        .where(col(Event.game_id) == game_id)
        .group_by(col(Event.name))
        .order_by(sa.func.count().desc())
        .limit(limit)
    ).scalars()
    return list(found)


def offer_preview(offer: Mission | Quest, missions: list[Mission] | None = None) -> str:
    """The offer as `GET /offerwall/offers` shows it (payout in USD here; each offerwall
    sees its own currency and its own tracking link)."""
    doc = mission_doc(offer) if isinstance(offer, Mission) else quest_doc(offer, missions or [])
    usd = lambda micros: micros / 1_000_000  # noqa: E731
    if isinstance(offer, Mission):
        doc["payout"] = usd(doc["payout"])
    else:
        doc["missions"] = [{**m, "payout": usd(m["payout"])} for m in doc["missions"]]
    doc["trackingLink"] = (
        f"<BASE_URL>/{'missions' if isinstance(offer, Mission) else 'quests'}/{offer.id}?owid=<owid>"
    )
    return json.dumps(doc, indent=2, ensure_ascii=False)


# --- the game's offers ----------------------------------------------------------------


@dataclass(frozen=True)
class OfferRow:
    id: str
    kind: str  # "mission" | "quest"
    title: str
    payout: str
    active: bool
    progress: str  # "conversions / cap" or "starts / start cap"
    rule: str
    quest: str  # for a mission inside a quest: the quest's name
    quest_id: str


def describe_rule(mission: Mission) -> str:
    conditions = " and ".join(
        f"{c['field']} {c['op']}" + (f" {plain_number(c.get('value'))}" if "value" in c else "")
        for c in mission.rule_conditions
    )
    where = f" where {conditions}" if conditions else ""
    kind = mission.rule_completion
    n = f"{mission.rule_threshold:g}"
    if kind == "sum":
        return f"sum of {mission.rule_sum_field} over {mission.rule_event}{where} ≥ {n}"
    return f"{kind} of {mission.rule_event}{where} ≥ {n}"


def game_offers(*, session: Session, game_id: str) -> list[OfferRow]:
    quests = {
        q.id: q
        for q in session.execute(sa.select(Quest).where(col(Quest.game_id) == game_id)).scalars()
    }
    missions = session.execute(
        sa.select(Mission)
        .where(col(Mission.game_id) == game_id)
        .order_by(
            col(Mission.quest_id).is_(None).desc(),
            col(Mission.quest_position),
            col(Mission.created_at),
        )
    ).scalars()
    rows = [
        OfferRow(
            q.id, "quest", q.name, "", q.is_active, f"{q.starts} / {q.start_cap or '∞'}", "", "", ""
        )
        for q in sorted(quests.values(), key=lambda q: q.created_at)
    ]
    for m in missions:
        quest = quests.get(m.quest_id or "")
        rows.append(
            OfferRow(
                m.id,
                "mission",
                m.title,
                f"${m.payout_micros / 1_000_000:,.2f}",
                m.is_active,
                f"{m.conversions} / {m.cap or '∞'}",
                describe_rule(m),
                quest.name if quest else "",
                m.quest_id or "",
            )
        )
    return rows
