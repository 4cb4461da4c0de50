"""Missions and quests have one owner: the same save, membership and conversion rules for
import files, the CLI and the editor."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import Engine
from sqlmodel import Session, select

from api.core.crypto import SecretBox
from api.core.db import write_session
from api.missions import OfferError, editor, offers
from api.missions.rules import Rule
from models import Mission, Quest
from models.offer_schemas import OffersFile
from tests.factories import make_game, mission_data


@pytest.fixture
def game_id(engine: Engine, box: SecretBox) -> str:
    return make_game(engine, box).game_id


def _import(engine: Engine, game_id: str, **catalog: Any) -> tuple[list[Mission], list[Quest]]:
    with write_session(engine) as session:
        missions, quests = offers.import_offers(
            session=session, data=OffersFile.model_validate({"gameId": game_id, **catalog})
        )
        return missions, quests


def _quest(name: str, *missions: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"name": name, "destinationUrl": "https://g.example/q", "missions": missions, **fields}


def _rows(engine: Engine) -> list[tuple[Any, ...]]:
    with Session(engine) as session:
        missions = session.exec(select(Mission).order_by(Mission.id)).all()  # type: ignore[arg-type]
        quests = session.exec(select(Quest).order_by(Quest.id)).all()  # type: ignore[arg-type]
        skip = {"created_at", "updated_at"}
        return [m.model_dump(exclude=skip) for m in missions] + [
            q.model_dump(exclude=skip) for q in quests
        ]


def test_an_import_refuses_a_mission_of_another_quest(engine, game_id):
    """The stricter rule, the editor's: a mission is in one quest at most. An import used
    to move it silently out of the other quest."""
    _, [first] = _import(engine, game_id, quests=[_quest("First", mission_data(title="Shared"))])
    with Session(engine) as session:
        shared = session.exec(select(Mission).where(Mission.quest_id == first.id)).one()
    with pytest.raises(OfferError, match="Shared is in another quest") as refused:
        _import(
            engine,
            game_id,
            quests=[_quest("Second", mission_data(id=shared.id, title="Shared"))],
        )
    assert refused.value.errors == {"missions": "Shared is in another quest"}
    with Session(engine) as session:
        assert session.get(Mission, shared.id).quest_id == first.id  # type: ignore[union-attr]
        assert len(session.exec(select(Quest)).all()) == 1  # nothing of it was saved


def test_missions_taken_out_of_a_quest_become_standalone(engine, game_id):
    _, [quest] = _import(
        engine,
        game_id,
        quests=[_quest("Q", mission_data(title="Stays"), mission_data(title="Leaves"))],
    )
    with Session(engine) as session:
        stays, leaves = session.exec(
            select(Mission).where(Mission.quest_id == quest.id).order_by(Mission.quest_position)  # type: ignore[arg-type]
        ).all()
    _import(engine, game_id, quests=[_quest("Q", mission_data(id=stays.id), id=quest.id)])
    with Session(engine) as session:
        assert session.get(Mission, stays.id).quest_id == quest.id  # type: ignore[union-attr]
        assert session.get(Mission, leaves.id).quest_id is None  # type: ignore[union-attr]


def test_saving_a_mission_on_its_own_keeps_its_quest(engine, game_id):
    _, [quest] = _import(engine, game_id, quests=[_quest("Q", mission_data(title="In"))])
    with Session(engine) as session:
        mission = session.exec(select(Mission)).one()
    _import(engine, game_id, missions=[mission_data(id=mission.id, title="Renamed")])
    with Session(engine) as session:
        again = session.get(Mission, mission.id)
        assert (again.title, again.quest_id) == ("Renamed", quest.id)  # type: ignore[union-attr]


def test_an_export_imports_again_to_the_same_rows(engine, game_id):
    _import(
        engine,
        game_id,
        missions=[
            mission_data(
                title="Everything",
                description="All fields set.",
                thumbnail="https://g.example/t.png",
                previewUrl="https://g.example/p",
                expirationDate="2027-12-31T23:59:59Z",
                isActive=False,
                cap=5,
                allowMultipleConversions=True,
                timeLimitSeconds=3600,
                operatingSystem=["iOS", "Android"],
                geotargeting={"countriesInclude": ["US"], "countriesExclude": ["FR"]},
                tags=["pvp"],
                instructions="Play.",
                requirements="None.",
                rule={
                    "event": "SCORE",
                    "conditions": [
                        {"field": "traits.mode", "op": "==", "value": "ranked"},
                        {"field": "traits.bot", "op": "not exists"},
                    ],
                    "completion": {"kind": "sum", "threshold": 2500, "field": "value"},
                },
            ),
            mission_data(title="Plain"),
        ],
        quests=[
            _quest("Q", mission_data(title="One"), mission_data(title="Two"), startCap=10),
        ],
    )
    before = _rows(engine)
    with Session(engine) as session:
        exported = offers.export_offers(session=session, game_id=game_id)
    assert [m.title for m in exported.quests[0].missions] == ["One", "Two"]
    _import(engine, game_id, **exported.model_dump(mode="json", exclude={"gameId"}))
    assert _rows(engine) == before


def test_a_portal_save_builds_the_rule_once(engine, game_id, monkeypatch):
    built = []
    original = Rule.build.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Rule], **kwargs: Any) -> Rule:
        built.append(kwargs["event"])
        return original(cls, **kwargs)

    monkeypatch.setattr(Rule, "build", classmethod(counting))
    form = {
        "title": "T",
        "payout": "1",
        "destinationUrl": "https://g.example/",
        "rule.event": "E",
    }
    with write_session(engine) as session:
        editor.save_mission_form(session=session, game_id=game_id, form=form, mission_id=None)
    assert built == ["E"]


def test_the_editor_cannot_save_into_another_games_mission(engine, box, game_id):
    [mission], _ = _import(engine, game_id, missions=[mission_data()])
    other = make_game(engine, box, "Other").game_id
    form = {"title": "Hijacked", "payout": "1", "destinationUrl": "https://g.example/"}
    with write_session(engine) as session, pytest.raises(OfferError, match="No such mission"):
        editor.save_mission_form(
            session=session, game_id=other, form={**form, "rule.event": "E"}, mission_id=mission.id
        )


# The editor's smallest form that saves.
FORM = {"title": "T", "payout": "1", "destinationUrl": "https://g.example/", "rule.event": "E"}


def test_a_rule_error_names_its_input(engine, game_id):
    form = {
        **FORM,
        "rule.conditions.0.field": "traits.mode",
        "rule.conditions.0.op": "==",
        "rule.conditions.0.value": "",
    }
    with write_session(engine) as session, pytest.raises(OfferError) as refused:
        editor.save_mission_form(session=session, game_id=game_id, form=form, mission_id=None)
    assert list(refused.value.errors) == ["rule.conditions.0.value"]


def test_a_save_refused_for_a_country_nobody_picked_stores_nothing(engine, game_id):
    form = {
        **FORM,
        "geotargeting.countriesInclude": "",
        "typed.geotargeting.countriesInclude": "Narnia",
    }
    with write_session(engine) as session, pytest.raises(OfferError) as refused:
        editor.save_mission_form(session=session, game_id=game_id, form=form, mission_id=None)
    assert list(refused.value.errors) == ["geotargeting.countriesInclude"]
    with Session(engine) as session:
        assert session.exec(select(Mission)).all() == []
    # A name the picker knows is saved as its code, chip or not.
    with write_session(engine) as session:
        saved = editor.save_mission_form(
            session=session,
            game_id=game_id,
            form={**form, "typed.geotargeting.countriesInclude": "USA"},
            mission_id=None,
        )
        assert saved.countries_include == ["US"]


def test_a_rule_that_keeps_something_else_starts_its_players_progress_again(engine, box, game_id):
    from sqlalchemy import update

    from models import Progress
    from tests.factories import make_click, make_offerwall

    distinct = mission_data(
        title="Maps",
        rule={
            "event": "MATCH",
            "completion": {"kind": "distinct", "threshold": 5, "field": "traits.map"},
        },
    )
    [mission], _ = _import(engine, game_id, missions=[distinct])
    wall, _ = make_offerwall(engine, box)
    make_click(engine, offer_id=mission.id, offerwall=wall)
    with write_session(engine) as session:
        session.execute(update(Progress).values(count=3, run=3, state=["desert", "jungle", "city"]))

    def progress() -> tuple:
        with Session(engine) as session:
            row = session.exec(select(Progress)).one()
            return row.count, row.state

    # A new target keeps what the players did.
    distinct["id"], distinct["rule"]["completion"]["threshold"] = mission.id, 4
    _import(engine, game_id, missions=[distinct])
    assert progress() == (3, ["desert", "jungle", "city"])
    # Different values per match keep a list of groups: the old list means nothing there.
    distinct["rule"]["per"] = "groupId"
    _import(engine, game_id, missions=[distinct])
    assert progress() == (0, None)


NUL, HALF = "\x00", "\ud800"  # half of a surrogate pair: what the JSON escape "\ud800" reads as
NO_NUL = "Remove the NUL character: text cannot hold it."
NO_HALF = "Remove the broken character (U+D800): text cannot hold it."


def test_an_import_refuses_text_no_database_stores_under_each_field(engine, game_id):
    mission = mission_data(
        id=f"m{NUL}",
        title=f"Duel{NUL}",
        description=f"A duel{HALF}",
        thumbnail=f"https://g.example/t{NUL}.png",
        previewUrl=f"https://g.example/p{NUL}",
        destinationUrl=f"https://g.example/{NUL}",
        tags=["pvp", f"ranked{NUL}"],
        instructions=NUL,
        requirements=HALF,
        operatingSystem=[f"Android{NUL}"],
        geotargeting={"countriesInclude": [f"DE{NUL}"]},
        recurrence={"every": "day", "timeZone": f"UTC{NUL}"},
        maxTraitField=f"kills{NUL}",
        maxTraitValue=10,
        fraudActions={f"hosting_network{NUL}": "refuse", "multi_offerwall": f"hold{NUL}"},
        rule={
            "event": f"DUEL{NUL}",
            "conditions": [
                {"field": f"traits.map{NUL}", "op": "==", "value": f"desert{NUL}"},
                {"field": "traits.mode", "op": "in", "value": ["ranked", f"casual{HALF}"]},
            ],
            "completion": {"kind": "sum", "threshold": 3, "field": f"traits.score{NUL}"},
            "per": f"traits.match{NUL}",
        },
    )
    quest = _quest(f"Season{NUL}", mission_data(title=f"Inside{HALF}"), description=NUL)
    pool = {"name": f"daily{NUL}", "size": 1}
    with pytest.raises(ValidationError) as refused:
        _import(engine, f"{game_id}{NUL}", missions=[mission], quests=[quest], pools=[pool])
    m = "missions.0."
    assert {".".join(map(str, e["loc"])): e["msg"] for e in refused.value.errors()} == {
        "gameId": NO_NUL,
        "pools.0.name": NO_NUL,
        f"{m}id": NO_NUL,
        f"{m}title": NO_NUL,
        f"{m}description": NO_HALF,
        f"{m}thumbnail": NO_NUL,
        f"{m}previewUrl": NO_NUL,
        f"{m}destinationUrl": NO_NUL,
        f"{m}tags.1": NO_NUL,
        f"{m}instructions": NO_NUL,
        f"{m}requirements": NO_HALF,
        f"{m}operatingSystem.0": NO_NUL,
        f"{m}geotargeting.countriesInclude.0": NO_NUL,
        f"{m}recurrence.timeZone": NO_NUL,
        f"{m}maxTraitField": NO_NUL,
        f"{m}fraudActions.hosting_network\\u0000": NO_NUL,
        f"{m}fraudActions.multi_offerwall": NO_NUL,
        f"{m}rule.event": NO_NUL,
        f"{m}rule.conditions.0.field": NO_NUL,
        f"{m}rule.conditions.0.value": NO_NUL,
        f"{m}rule.conditions.1.value.1": NO_HALF,
        f"{m}rule.completion.field": NO_NUL,
        f"{m}rule.per": NO_NUL,
        "quests.0.name": NO_NUL,
        "quests.0.description": NO_NUL,
        "quests.0.missions.0.title": NO_HALF,
    }
    assert _rows(engine) == []


def test_a_character_written_as_a_surrogate_pair_is_imported_and_read_back(engine, game_id):
    # JSON writes a character past U+FFFF as two escapes; read together they are one.
    title = json.loads('"Duel \\ud83c\\udfae"')
    [saved], _ = _import(engine, game_id, missions=[mission_data(title=title, tags=[title])])
    with Session(engine) as session:
        stored = session.get(Mission, saved.id)
        assert stored is not None
        assert (stored.title, stored.tags) == ("Duel 🎮", ["Duel 🎮"])
