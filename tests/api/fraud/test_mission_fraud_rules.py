"""A mission's own actions for the risk signals (docs/fraud.md#rules), SQLite and
PostgreSQL, through tracking links and signed events: a mission makes its offerwall's rule
stricter (refuse a hosting network's click, hold a conversion the deployment allows), never
looser; a quest's click takes the strictest of its missions; bad definitions are refused
with what is wrong, in the schema, the editor's form and the command line."""

from __future__ import annotations

import json
import os
import re

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api.app import create_api
from api.core.db import new_session, write_session
from api.fraud import policy as fraud
from api.listing.offers import mission_doc
from api.missions import INDEX, editor, offers
from api.missions.forms import FormError, form_values, from_form
from models import Click, Conversion, ConversionStatus, Mission
from models.offer_schemas import MissionIn, mission_in
from models.signals import parse_defaults
from models.tables import mission as _mission
from models.tables import refused_click as _refused
from tests.api.steps import at, set_offerwall_rules, start
from tests.api.tracking_helpers import click, platform_id
from tests.factories import (
    FixedCountries,
    SignedClient,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)

HOSTING_IP, HOME_IP = "203.0.113.7", "198.51.100.9"  # 203.0.113.0/24 is listed as hosting
SCORE = {
    "rule": {
        "event": "MATCH_END",
        "conditions": [{"field": "value", "op": ">=", "value": 500}],
        "completion": {"kind": "count", "threshold": 1},
    },
}


@pytest.fixture
def screened(engine, api_settings, box) -> TestClient:
    """The API with the built-in defaults (hosting_network holds, multi_offerwall holds),
    and 203.0.113.0/24 listed as hosting."""
    settings = api_settings.model_copy(
        update={"hosting_networks": "203.0.113.0/24", "fraud_defaults": ""}
    )
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    return TestClient(app, client=("127.0.0.1", 50000), follow_redirects=False)


def _new(engine, game, title: str, **fields):
    return make_mission(engine, game.game_id, **{**SCORE, "title": title, **fields})


def _score(signed, user: str) -> None:
    answer = signed.events({"userId": user, "event": "MATCH_END", "time": at(1), "value": 700})
    assert answer.status_code == 200, answer.text


def _conversion(engine, mission_id: str) -> tuple[str, list[str] | None]:
    with new_session(engine) as session:
        [row] = session.scalars(sa.select(Conversion).where(Conversion.mission_id == mission_id))  # type: ignore[arg-type]
        return row.status, row.signals


def test_a_mission_refuses_a_hosting_networks_click_while_another_on_the_wall_holds(
    engine, screened, game, wall
):
    strict = _new(engine, game, "Farmed", fraudActions={"hosting_network": "refuse"})
    plain = _new(engine, game, "Quiet")
    assert strict.fraud_actions == {"hosting_network": "refuse"}
    assert plain.fraud_actions is None

    refused = click(screened, "mission", strict.id, wall[0].owid, uid="farm-1", ip=HOSTING_IP)
    assert refused.status_code == 403
    assert "cannot be opened right now" in refused.text  # the same neutral page
    with new_session(engine) as session:
        assert session.execute(sa.select(_refused.c.reason, _refused.c.offer_id)).all() == [
            ("hosting_network", strict.id)
        ]
    # From a home connection the strict mission's click passes.
    home = click(screened, "mission", strict.id, wall[0].owid, uid="home", ip=HOME_IP)
    assert home.status_code == 302
    assert _clicks(engine) == 1

    # The other mission on the same offerwall follows the offerwall: held for review.
    signed = SignedClient(screened, game)
    start(screened, signed, wall, plain.id, "p1")  # from the hosting network
    _score(signed, "p1")
    assert _conversion(engine, plain.id) == (ConversionStatus.PENDING, ["hosting_network"])


def _clicks(engine) -> int:
    with new_session(engine) as session:
        return int(session.scalar(sa.select(sa.func.count()).select_from(Click)) or 0)


def test_a_mission_holds_multi_offerwall_although_the_deployment_allows_it(
    engine, client, api_settings, game, wall, box
):
    assert parse_defaults(api_settings.fraud_defaults) == (("multi_offerwall", "allow"),)
    signed = SignedClient(client, game)
    other, _ = make_offerwall(engine, box, name="Other wall")
    held = _new(engine, game, "Held", fraudActions={"multi_offerwall": "hold"})
    allowed = _new(engine, game, "Allowed")
    for n, mission in enumerate((held, allowed)):
        # The player took the offer through both offerwalls from one address.
        assert click(client, "mission", mission.id, wall[0].owid, uid=f"x{n}").status_code == 302
        again = click(client, "mission", mission.id, other.owid, uid=f"y{n}")
        signed.identifiers({"userId": f"twice{n}", "platformUserId": platform_id(again)})
        _score(signed, f"twice{n}")
    assert _conversion(engine, held.id) == (ConversionStatus.PENDING, ["multi_offerwall"])
    assert _conversion(engine, allowed.id) == (ConversionStatus.APPROVED, ["multi_offerwall"])


def test_a_mission_cannot_loosen_its_offerwalls_rules(engine, screened, game, wall):
    # Refused in a definition, with what it may set instead.
    with pytest.raises(ValidationError, match=r"refuse or hold .* not 'allow'"):
        MissionIn.model_validate(mission_data(fraudActions={"hosting_network": "allow"}))
    # A looser action stored anyway (by hand, in the database) is ignored: stricter wins.
    set_offerwall_rules(engine, wall[0].id, {"hosting_network": "refuse"})
    mission = _new(engine, game, "Loose")
    with write_session(engine) as session:
        session.execute(
            sa.update(_mission)
            .where(_mission.c.id == mission.id)
            .values(fraud_actions={"hosting_network": "allow"})
        )
    answer = click(screened, "mission", mission.id, wall[0].owid, uid="p", ip=HOSTING_IP)
    assert answer.status_code == 403
    # The rule in one place: the stricter of the offerwall's (else the default) and the
    # mission's.
    policy = fraud.Policy(overrides=(("multi_offerwall", "allow"),))
    refuse = {"hosting_network": "refuse"}
    assert policy.action("hosting_network", refuse, {"hosting_network": "hold"}) == "refuse"
    assert policy.action("hosting_network", None, {"hosting_network": "allow"}) == "hold"
    assert policy.action("hosting_network", None, refuse) == "refuse"
    assert policy.action("multi_offerwall", None, {"multi_offerwall": "hold"}) == "hold"
    assert policy.action("shared_ip", {"shared_ip": "allow"}, {"shared_ip": "refuse"}) == "allow"
    assert policy.held(["shared_ip"], {"shared_ip": "allow"}, {"shared_ip": "hold"})
    assert not policy.held(["multi_offerwall"], None, {"hosting_network": "refuse"})


def test_a_quest_click_takes_the_strictest_of_its_missions(engine, screened, game, wall):
    set_offerwall_rules(engine, wall[0].id, {"hosting_network": "allow"})
    strict = make_quest(
        engine,
        game.game_id,
        [
            mission_data(title="One", fraudActions={"hosting_network": "hold"}),
            mission_data(title="Two", fraudActions={"hosting_network": "refuse"}),
            mission_data(title="Three"),
        ],
    )
    refused = click(screened, "quest", strict.id, wall[0].owid, uid="q1", ip=HOSTING_IP)
    assert refused.status_code == 403
    with new_session(engine) as session:
        assert session.scalar(sa.select(_refused.c.reason)) == "hosting_network"

    held = make_quest(
        engine,
        game.game_id,
        [
            mission_data(title="Held", fraudActions={"hosting_network": "hold"}, **SCORE),
            mission_data(title="Open"),
        ],
        name="Held quest",
    )
    signed = SignedClient(screened, game)
    start(screened, signed, wall, held.id, "p1", kind="quest")  # hold: the click passes
    _score(signed, "p1")
    with new_session(engine) as session:
        [first] = session.scalars(sa.select(Mission).where(Mission.title == "Held"))  # type: ignore[arg-type]
    assert _conversion(engine, first.id) == (ConversionStatus.PENDING, ["hosting_network"])
    assert fraud.strictest([{"shared_ip": "hold"}, None, {"hosting_network": "refuse"}]) == {
        "shared_ip": "hold",
        "hosting_network": "refuse",
    }
    assert fraud.strictest([{"hosting_network": "refuse"}, {"hosting_network": "hold"}]) == {
        "hosting_network": "refuse"
    }


def test_every_completion_of_a_quest_is_judged_by_the_strictest_of_its_missions(
    engine, client, api_settings, game, wall, box
):
    # The deployment allows multi_offerwall; one mission of the quest holds it.
    assert parse_defaults(api_settings.fraud_defaults) == (("multi_offerwall", "allow"),)
    quest = make_quest(
        engine,
        game.game_id,
        [
            mission_data(title="Strict", fraudActions={"multi_offerwall": "hold"}),
            mission_data(title="Lenient", **SCORE),
        ],
    )
    other, _ = make_offerwall(engine, box, name="Other wall")
    signed = SignedClient(client, game)
    # The player took the quest through both offerwalls from one address.
    assert click(client, "quest", quest.id, wall[0].owid, uid="x").status_code == 302
    again = click(client, "quest", quest.id, other.owid, uid="y")
    signed.identifiers({"userId": "twice", "platformUserId": platform_id(again)})
    _score(signed, "twice")  # completes the lenient mission only
    with new_session(engine) as session:
        [lenient] = session.scalars(sa.select(Mission).where(Mission.title == "Lenient"))  # type: ignore[arg-type]
        spec = INDEX.current(session).missions[lenient.id]
    assert _conversion(engine, lenient.id) == (ConversionStatus.PENDING, ["multi_offerwall"])
    assert spec.fraud_actions == {"multi_offerwall": "hold"}  # the quest's rule, not its own


def test_a_missions_actions_are_read_back_but_never_listed(engine, game, wall):
    mission = _new(engine, game, "Read back", fraudActions={"shared_ip": "hold"})
    with new_session(engine) as session:
        stored = session.get(Mission, mission.id)
        assert stored is not None
        assert mission_in(stored).fraudActions == {"shared_ip": "hold"}
        assert form_values(mission_in(stored))["fraudActions.shared_ip"] == "hold"
        assert "fraudActions" not in mission_doc(stored)  # a rule known is a rule dodged
        [exported] = offers.export_offers(session=session, game_id=game.game_id).missions
        assert exported.fraudActions == {"shared_ip": "hold"}
        spec = INDEX.current(session).missions[mission.id]  # the completion's copy
        assert spec.fraud_actions == {"shared_ip": "hold"}


BAD = [
    ({"bogus": "hold"}, "Unknown signal 'bogus'"),
    ({"shared_ip": "refuse"}, "shared_ip to hold (stricter than its offerwall's rule)"),
    ({"hosting_network": "allow"}, "hosting_network to refuse or hold"),
    ({"scripted_agent": "block"}, "not 'block'"),
]


@pytest.mark.parametrize(("actions", "message"), BAD)
def test_bad_actions_are_refused_with_what_is_wrong(actions, message):
    with pytest.raises(ValidationError, match=re.escape(message)):
        MissionIn.model_validate(mission_data(fraudActions=actions))
    for bad in (["hold"], "hold", {"shared_ip": 3}):
        with pytest.raises(ValidationError):
            MissionIn.model_validate(mission_data(fraudActions=bad))


FORM = {
    "title": "Form",
    "payout": "1",
    "destinationUrl": "https://game.example/",
    "rule.event": "WIN",
    **{f"fraudActions.{s}": "" for s in fraud.SIGNALS},
}


def test_the_editors_form_saves_selects_keeps_them_and_refuses_bad_ones(engine, game):
    # Every select left at the offerwall's rule: nothing stored.
    with write_session(engine) as session:
        saved = editor.save_mission_form(
            session=session, game_id=game.game_id, form=FORM, mission_id=None
        )
    assert saved.fraud_actions is None
    chosen = {**FORM, "fraudActions.hosting_network": "refuse", "fraudActions.stale_event": "hold"}
    with write_session(engine) as session:
        saved = editor.save_mission_form(
            session=session, game_id=game.game_id, form=chosen, mission_id=saved.id
        )
    assert saved.fraud_actions == {"hosting_network": "refuse", "stale_event": "hold"}
    # A form without the selects (another page's) keeps what is stored.
    assert from_form(MissionIn, {"title": "Renamed"}, stored=mission_in(saved)).fraudActions == {
        "hosting_network": "refuse",
        "stale_event": "hold",
    }
    for name, value in (("stale_event", "refuse"), ("hosting_network", "allow"), ("x", "hold")):
        with pytest.raises(FormError) as refused, write_session(engine) as session:
            editor.save_mission_form(
                session=session,
                game_id=game.game_id,
                form={**chosen, f"fraudActions.{name}": value},
                mission_id=saved.id,
            )
        assert list(refused.value.errors) == ["fraudActions"]
        assert name in refused.value.errors["fraudActions"]
    with new_session(engine) as session:
        kept = session.get(Mission, saved.id)
        assert kept is not None and kept.fraud_actions == saved.fraud_actions


def test_the_command_line_imports_lists_and_refuses_a_missions_actions(db_url, tmp_path, game):
    from tests.conftest import MASTER_KEY
    from tests.live import cli, run_cli

    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": MASTER_KEY,
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
    }
    path = tmp_path / "offers.json"

    def write(actions: object) -> str:
        data = {"gameId": game.game_id, "missions": [mission_data(fraudActions=actions)]}
        path.write_text(json.dumps(data))
        return str(path)

    answer = cli(env, "offers", "import", write({"hosting_network": "refuse"}))
    [imported] = json.loads(answer)["missions"]
    listed = json.loads(cli(env, "offers", "list", "--game", game.game_id))["missions"]
    assert [(m["id"], m["fraudActions"]) for m in listed] == [
        (imported["id"], {"hosting_network": "refuse"})
    ]
    bad = run_cli(env, "offers", "import", write({"shared_ip": "refuse"}))
    assert bad.returncode == 1
    assert "missions.0.fraudActions" in bad.stderr and "not 'refuse'" in bad.stderr
    assert "Traceback" not in bad.stderr
