"""What the portal's mission editor and rule tester need: forms to definitions, the rule
tester's event-by-event run, the offer preview, and the game's event names.

The definitions go through the same schemas (models/offer_schemas.py) and the same
engine (api/services/rules.py) as import files and ingestion: the portal adds no rules
of its own."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError
from sqlmodel import Session, col

from api.services.errors import DomainError
from api.services.offer_listing import mission_doc, quest_doc
from api.services.rules import Rule, RuleError, Tally, step
from models import Event, Mission, Quest
from models.offer_schemas import MissionIn, RuleIn

MAX_CONDITIONS = 5
MAX_TEST_EVENTS = 500


class FormError(DomainError, ValueError):
    """A form that does not make a valid definition; `errors` maps inputs to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def _scalar(text: str) -> float | str | bool:
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def _items(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,\s]+", text) if part.strip()]


def rule_fields(form: Mapping[str, str]) -> dict[str, Any]:
    """The rule part of a form: rule_event, cond_field_N / cond_op_N / cond_value_N,
    completion, threshold, sum_field."""
    conditions = []
    for n in range(MAX_CONDITIONS):
        name = form.get(f"cond_field_{n}", "").strip()
        if not name:
            continue
        op = form.get(f"cond_op_{n}", ">=")
        condition: dict[str, Any] = {"field": name, "op": op}
        if op not in ("exists", "not exists"):
            condition["value"] = _scalar(form.get(f"cond_value_{n}", ""))
        conditions.append(condition)
    completion: dict[str, Any] = {
        "kind": form.get("completion", "count"),
        "threshold": form.get("threshold", "1") or "1",
    }
    if completion["kind"] == "sum":
        completion["field"] = form.get("sum_field", "").strip() or None
    return {
        "event": form.get("rule_event", "").strip(),
        "conditions": conditions,
        "completion": completion,
    }


def rule_from_form(form: Mapping[str, str]) -> Rule:
    try:
        rule_in = RuleIn.model_validate(rule_fields(form))
        return Rule.build(
            event=rule_in.event,
            conditions=[c.model_dump() for c in rule_in.conditions],
            completion=rule_in.completion.kind,
            threshold=rule_in.completion.threshold,
            sum_field=rule_in.completion.field,
        )
    except ValidationError as exc:
        raise FormError(_errors(exc, prefix="rule.")) from None
    except RuleError as exc:
        raise FormError({"rule": str(exc)}) from None


def mission_from_form(form: Mapping[str, str], *, mission_id: str | None) -> MissionIn:
    """The editor's form as a mission definition; FormError names each bad input."""
    expiration = form.get("expiration_date", "").strip()
    data: dict[str, Any] = {
        "id": mission_id,
        "title": form.get("title", "").strip(),
        "description": form.get("description", "").strip() or None,
        "thumbnail": form.get("thumbnail", "").strip(),
        "previewUrl": form.get("preview_url", "").strip(),
        "destinationUrl": form.get("destination_url", "").strip(),
        "expirationDate": f"{expiration}T00:00:00Z" if expiration else None,
        "isActive": form.get("is_active") in ("on", "true"),
        "payout": form.get("payout", "").strip() or "0",
        "cap": form.get("cap", "").strip() or None,
        "allowMultipleConversions": form.get("allow_multiple") in ("on", "true"),
        "timeLimitSeconds": _seconds(form.get("time_limit_hours", "")),
        "operatingSystem": [v for k, v in form.items() if k.startswith("os_") and v],
        "geotargeting": {
            "countriesInclude": _items(form.get("countries_include", "")),
            "countriesExclude": _items(form.get("countries_exclude", "")),
        },
        "tags": _items(form.get("tags", "").replace(";", ",")),
        "instructions": form.get("instructions", "").strip(),
        "requirements": form.get("requirements", "").strip(),
        "rule": rule_fields(form),
    }
    try:
        mission = MissionIn.model_validate(data)
    except ValidationError as exc:
        raise FormError(_errors(exc)) from None
    rule_from_form(form)  # the engine's own checks
    return mission


def _seconds(hours: str) -> int | str | None:
    hours = hours.strip()
    if not hours:
        return None
    try:
        return max(1, round(float(hours) * 3600))
    except ValueError:
        return hours  # the schema says what is wrong


# Schema locations → the editor's input names.
_INPUTS = {
    "title": "title",
    "destinationUrl": "destination_url",
    "previewUrl": "preview_url",
    "thumbnail": "thumbnail",
    "payout": "payout",
    "cap": "cap",
    "timeLimitSeconds": "time_limit_hours",
    "operatingSystem": "os",
    "geotargeting.countriesInclude": "countries_include",
    "geotargeting.countriesExclude": "countries_exclude",
    "expirationDate": "expiration_date",
    "rule.event": "rule_event",
    "rule.completion.threshold": "threshold",
    "rule.completion.kind": "completion",
}


def _errors(exc: ValidationError, prefix: str = "") -> dict[str, str]:
    errors: dict[str, str] = {}
    for error in exc.errors():
        where = prefix + ".".join(str(p) for p in error["loc"] if not isinstance(p, int))
        message = error["msg"].removeprefix("Value error, ")
        key = _INPUTS.get(where, "rule" if where.startswith("rule") else where or "form")
        errors.setdefault(key, message)
    return errors


# --- the rule tester ----------------------------------------------------------------


@dataclass(frozen=True)
class TestStep:
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
                    event.setdefault("traits", {})[key] = _scalar(raw)
                elif "value" not in event:
                    value = _scalar(part)
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


def test_rule(rule: Rule, events: list[dict[str, Any]], *, repeatable: bool) -> list[TestStep]:
    """Each event through the engine (the same `step` ingestion uses), with the tally after
    it; a repeatable mission starts again from zero after a completion."""
    tally, steps = Tally(), []
    for n, event in enumerate(events, start=1):
        outcome = step(rule, tally, event)
        tally = outcome.tally
        steps.append(
            TestStep(
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


def utc_date(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d") if moment else ""


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
        f"{c['field']} {c['op']}" + (f" {c.get('value')}" if "value" in c else "")
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


def quest_from_form(form: Mapping[str, str], *, quest_id: str | None) -> dict[str, Any]:
    """A quest's own fields from the quest form (its missions are chosen separately)."""
    from models.offer_schemas import QuestIn

    data = {
        "id": quest_id,
        "name": form.get("name", "").strip(),
        "description": form.get("description", "").strip() or None,
        "destinationUrl": form.get("destination_url", "").strip(),
        "startCap": form.get("start_cap", "").strip() or None,
        "isActive": form.get("is_active") in ("on", "true"),
        "instructions": form.get("instructions", "").strip(),
        # Checked with a stand-in mission: the real ones exist already.
        "missions": [
            {"title": "x", "payout": 0, "destinationUrl": "https://x/", "rule": {"event": "x"}}
        ],
    }
    try:
        QuestIn.model_validate(data)
    except ValidationError as exc:
        errors = _errors(exc)
        raise FormError({_QUEST_INPUTS.get(k, k): v for k, v in errors.items()}) from None
    return data


_QUEST_INPUTS = {"destination_url": "destination_url", "startCap": "start_cap", "name": "name"}


def save_quest(
    *, session: Session, game_id: str, data: Mapping[str, Any], mission_ids: list[str]
) -> Quest:
    """Create or update a quest from the game's missions, in the order given. Missions
    taken out of the quest become standalone again."""
    from api.services import catalog

    if not mission_ids:
        raise FormError({"missions": "a quest needs at least one mission"})
    quest = session.get(Quest, data["id"]) if data.get("id") else None
    if quest is not None and quest.game_id != game_id:
        raise FormError({"form": "no such quest"})
    if quest is None:
        quest = Quest(game_id=game_id, name=data["name"], destination_url=data["destinationUrl"])
    quest.name, quest.destination_url = data["name"], data["destinationUrl"]
    quest.description, quest.instructions = data["description"], data["instructions"]
    quest.start_cap = int(data["startCap"]) if data["startCap"] else None
    quest.is_active = data["isActive"]
    session.add(quest)
    session.flush()
    chosen = (
        session.execute(
            sa.select(Mission).where(
                col(Mission.id).in_(mission_ids), col(Mission.game_id) == game_id
            )
        )
        .scalars()
        .all()
    )
    by_id = {m.id: m for m in chosen}
    if set(by_id) != set(mission_ids):
        raise FormError({"missions": "a chosen mission is not one of this game's"})
    for m in session.execute(sa.select(Mission).where(col(Mission.quest_id) == quest.id)).scalars():
        if m.id not in by_id:
            m.quest_id, m.quest_position = None, 0
    for position, mission_id in enumerate(mission_ids):
        mission = by_id[mission_id]
        if mission.quest_id not in (None, quest.id):
            raise FormError({"missions": f"{mission.title} is in another quest"})
        mission.quest_id, mission.quest_position = quest.id, position
    session.flush()
    catalog.bump(session)
    return quest
