"""What the portal's mission editor and rule tester need: forms to definitions, the rule
tester's event-by-event run, the offer preview, and the game's event names.

The definitions go through the same schemas (models/offer_schemas.py) and the same
engine (api/services/rules.py) as import files and ingestion: the portal adds no rules
of its own."""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError
from sqlmodel import Session, col

from api.services import offers
from api.services.offer_listing import mission_doc, quest_doc
from api.services.offers import OfferError
from api.services.rules import Rule, RuleError, Tally, step
from models import Event, Mission, Quest
from models.offer_schemas import MissionIn, QuestFields, RuleIn, mission_in, quest_fields

MAX_TEST_EVENTS = 500
Definition = typing.TypeVar("Definition", bound=BaseModel)


class FormError(OfferError):
    """A form that does not make a valid definition; `errors` maps inputs to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self._errors = errors

    @property
    def errors(self) -> dict[str, str]:
        return self._errors


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
    return [part.strip() for part in re.split(r"[,;\s]+", text) if part.strip()]


# --- forms to definitions -------------------------------------------------------------
#
# The editor's inputs are named after the definition's field paths (`title`,
# `geotargeting.countriesInclude`, `rule.conditions.0.value`, `operatingSystem.2`), so a
# form becomes a definition by its schema alone: each input's text is read as its field's
# type says. A checkbox comes after a hidden input of the same name and value "false", so
# an unchecked box is submitted too. Inputs the form does not have keep the stored value.

# Inputs shown in a larger unit than the field's: the time limit is edited in hours.
UNITS = {"timeLimitSeconds": 3600}


def form_values(definition: BaseModel) -> dict[str, str]:
    """A definition as the text of the inputs named after its field paths (the editor's
    defaults when it opens a stored offer)."""
    values: dict[str, str] = {}
    for name, value in definition.model_dump(mode="json").items():
        _flatten(values, name, value)
    for name, factor in UNITS.items():
        if values.get(name):
            values[name] = f"{float(values[name]) / factor:g}"
    if values.get("expirationDate"):
        values["expirationDate"] = values["expirationDate"][:10]
    return values


def _flatten(values: dict[str, str], path: str, value: Any) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(values, f"{path}.{key}", inner)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        for n, inner in enumerate(value):
            _flatten(values, f"{path}.{n}", inner)
    elif isinstance(value, list):
        values[path] = ", ".join(str(v) for v in value)
    elif isinstance(value, bool):
        values[path] = "true" if value else "false"
    elif isinstance(value, float):
        values[path] = f"{value:g}"
    else:
        values[path] = "" if value is None else str(value)


def from_form(
    schema: type[Definition],
    form: Mapping[str, str],
    *,
    stored: Definition | None = None,
    root: str = "",
) -> Definition:
    """The definition a form makes: the stored one (if any) with the form's inputs over it.
    FormError maps each bad input's name to its message."""
    data = stored.model_dump() if stored is not None else {}
    data.update(_read(schema, _tree(form, root)))
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise FormError(_errors(exc, form, root)) from None


def _tree(form: Mapping[str, str], root: str) -> dict[str, Any]:
    """`a.b.0.c` names as nested dicts (list items keyed by their index)."""
    tree: dict[str, Any] = {}
    prefix = f"{root}." if root else ""
    for name, text in form.items():
        if not name.startswith(prefix) or name == "id":  # the id is never the form's
            continue
        *parents, last = name.removeprefix(prefix).split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = str(text)
    return tree


def _read(schema: type[BaseModel], tree: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        if name in tree:
            data[name] = _value(info.annotation, tree[name], name)
    return {k: v for k, v in data.items() if v is not _OMIT}


_OMIT = object()


def _value(annotation: Any, raw: Any, name: str) -> Any:
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    args = typing.get_args(annotation) if union else (annotation,)
    kinds = [a for a in args if a is not type(None)]
    optional = type(None) in args
    kind = kinds[0] if len(kinds) == 1 else None
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _read(kind, raw) if isinstance(raw, dict) else _OMIT
    if origin is list:
        item = typing.get_args(kind)[0]
        if isinstance(raw, str):
            return _items(raw)
        rows = [raw[k] for k in sorted(raw, key=int)]
        if isinstance(item, type) and issubclass(item, BaseModel):
            first = next(iter(item.model_fields))
            return [_read(item, row) for row in rows if str(row.get(first, "")).strip()]
        return [row for row in rows if row.strip()]
    text = raw.strip() if isinstance(raw, str) else raw
    if kind is bool:
        return text in ("on", "true")
    if text == "":
        return None if optional else "" if kind is str else _OMIT
    if kind is datetime:
        return f"{text}T00:00:00Z" if len(text) == 10 else text
    if name in UNITS:
        try:
            return max(1, round(float(text) * UNITS[name]))
        except ValueError:
            return text  # the schema says what is wrong
    if kind is None and str in kinds:
        return _scalar(text)  # a condition's value: a number, a boolean or a string
    return text


def _errors(exc: ValidationError, form: Mapping[str, str], root: str = "") -> dict[str, str]:
    """Each error under the input it is about: the longest field path of the error's
    location that the form has an input for, else the first part of it (the rule, the
    operating systems), else "form"."""
    errors: dict[str, str] = {}
    for error in exc.errors():
        parts = [str(p) for p in ((root,) if root else ()) + tuple(error["loc"])]
        paths = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
        key = next((p for p in paths if p in form), parts[0] if parts else "form")
        errors.setdefault(key, error["msg"].removeprefix("Value error, "))
    return errors


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
