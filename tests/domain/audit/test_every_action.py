"""Each action that moves money or access, done once, is exactly one audit event: its
action, its target as it was named, its scope, the actor who did it, and each changed
field before and after; never a secret value. (Every other test of the run also fails if
it commits such a change without an event: tests/audit_guard.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from api import audit
from api.conversions import review
from api.core.db import write_session
from api.economics import budgets, promotions
from api.fraud import blocklist
from api.fraud import policy as fraud_policy
from api.fraud.rules import set_offerwall_rules
from api.missions import offers
from api.postbacks import endpoint as postback_endpoint
from api.publishers import offerwalls, wall_settings
from api.publishers.signup import signup_publisher
from api.studios import games, studios
from api.webhooks import endpoints as webhook_endpoints
from models import AuditEvent, Offerwall, Role, WebhookEndpoint
from models.offer_schemas import BudgetIn, MissionIn, OffersFile, PoolIn
from models.tables import conversion as _conversion
from models.types import utcnow
from tests.factories import (
    make_account,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_studio,
    mission_data,
)

DESIGNER = audit.account_actor(
    "u-designer", "designer@example.com", "designer", ip="203.0.113.9", user_agent="Chromium"
)
_event = AuditEvent.__table__


class Trail:
    """The events recorded since the last look."""

    def __init__(self, engine):
        self.engine = engine
        self.seen = 0

    def new(self) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(_event).where(_event.c.id > self.seen).order_by(_event.c.id)
            ).mappings()
            found = [dict(row) for row in rows]
        if found:
            self.seen = found[-1]["id"]
        return found

    def one(self, action: str, target: tuple[str, str]) -> dict[str, Any]:
        """Exactly one new event, of `action` on `target`, by the designer."""
        found = self.new()
        assert [e["action"] for e in found] == [action], found
        event = found[0]
        assert (event["target_type"], event["target_id"]) == target
        assert (event["actor_kind"], event["actor_email"], event["actor_ip"]) == (
            "account",
            "designer@example.com",
            "203.0.113.9",
        )
        return event


@pytest.fixture
def trail(engine) -> Trail:
    return Trail(engine)


@pytest.fixture
def act(engine) -> Callable[[Callable[[Any], Any]], Any]:
    """Run `work(session)` in one transaction, as the designer."""

    def run(work: Callable[[Any], Any]) -> Any:
        with audit.acting_as(DESIGNER), write_session(engine) as session:
            return work(session)

    return run


@pytest.fixture
def secrets() -> Iterator[list[str]]:
    """Every secret a test made: none may appear in any event."""
    made: list[str] = []
    yield made


def no_secret_in(engine, made: list[str]) -> None:
    with engine.connect() as conn:
        text = json.dumps(
            [dict(r) for r in conn.execute(sa.select(_event)).mappings()], default=str
        )
    for secret in made:
        assert secret not in text


def test_offerwall_settings_and_secrets(engine, box, trail, act, secrets):
    wall = act(lambda s: offerwalls.create_offerwall(session=s, name="North Wall"))
    event = trail.one("offerwall.created", ("offerwall", wall.id))
    assert event["changes"] == {"name": [None, "North Wall"], "status": [None, "pending"]}
    assert (event["scope_type"], event["scope_id"], event["target_name"]) == (
        "offerwall",
        wall.id,
        "North Wall",
    )
    secrets.append(
        act(
            lambda s: offerwalls.approve(session=s, box=box, offerwall=s.get(Offerwall, wall.id))
        ).api_key
    )
    trail.one("offerwall.approved", ("offerwall", wall.id))

    def currency(s):
        offerwalls.set_currency(
            session=s,
            offerwall=s.get(Offerwall, wall.id),
            name="Gems",
            code="GEM",
            exchange_rate=100,
            decimals=0,
        )

    act(currency)
    event = trail.one("offerwall.currency_changed", ("offerwall", wall.id))
    assert event["changes"] == {
        "currency_code": ["USD", "GEM"],
        "currency_decimals": [2, 0],
        "currency_name": ["US Dollar", "Gems"],
        "exchange_rate": [1.0, 100.0],
    }
    act(currency)  # the same again: nothing changed, nothing recorded
    assert trail.new() == []

    def wall_look(s):
        wanted = wall_settings.checked_settings(
            title="Earn gems",
            logo_url="",
            accent="#112233",
            currency_icon="",
            origins="https://game.example",
            require_signature=True,
        )
        wall_settings.store(session=s, offerwall=s.get(Offerwall, wall.id), wanted=wanted)

    act(wall_look)
    event = trail.one("offerwall.wall_settings_changed", ("offerwall", wall.id))
    assert event["changes"]["accent"] == ["#4f46e5", "#112233"]
    assert event["changes"]["require_signature"] == [False, True]

    act(
        lambda s: wall_settings.set_test_postbacks(
            session=s, account=make_account(Role.STAFF), requested=wall.id, send=True
        )
    )
    trail.one("offerwall.test_postbacks_changed", ("offerwall", wall.id))

    act(
        lambda s: set_offerwall_rules(
            session=s,
            offerwall_id=wall.id,
            actions={fraud_policy.HOSTING_NETWORK: "allow"},
            review_postbacks=True,
            policy=fraud_policy.Policy(),
        )
    )
    event = trail.one("offerwall.fraud_rules_changed", ("offerwall", wall.id))
    assert event["changes"] == {
        "fraud_actions": [{}, {fraud_policy.HOSTING_NETWORK: "allow"}],
        "review_postbacks": [False, True],
    }

    secrets.append(
        act(
            lambda s: postback_endpoint.reveal_signing_secret(
                session=s, box=box, offerwall=s.get(Offerwall, wall.id)
            )
        )
    )
    assert trail.one("offerwall.signing_secret_revealed", ("offerwall", wall.id))["changes"] == {}
    secrets.append(
        act(
            lambda s: postback_endpoint.rotate_signing_secret(
                session=s, box=box, offerwall=s.get(Offerwall, wall.id), overlap="1h"
            )
        )
    )
    event = trail.one("offerwall.signing_secret_rotated", ("offerwall", wall.id))
    assert event["changes"] == {"overlap": [None, "1h"]}
    no_secret_in(engine, secrets)


def test_a_paused_offerwall_resumed(engine, box, trail, act, settings):
    wall, _ = make_offerwall(engine, box)
    with engine.begin() as conn:  # paused by failures: the worker's doing, not recorded
        conn.execute(
            sa.update(Offerwall.__table__)
            .where(Offerwall.__table__.c.id == wall.id)
            .values(deliveries_paused_at=utcnow())
        )
    trail.new()
    act(
        lambda s: postback_endpoint.resume(
            session=s, offerwall=s.get(Offerwall, wall.id), settings=settings
        )
    )
    event = trail.one("offerwall.deliveries_resumed", ("offerwall", wall.id))
    assert event["changes"]["deliveries_paused_at"][1] is None


def test_a_publishers_signup(engine, trail):
    with write_session(engine) as session:
        user = signup_publisher(
            session=session,
            company="Signup Wall",
            website="https://signup.example",
            contact="Ada",
            email="ada@signup.example",
            password="a long enough password",
        )
    found = [e for e in trail.new() if e["target_type"] == "offerwall"]
    assert [e["action"] for e in found] == ["publisher.signed_up"]
    assert found[0]["target_id"] == user.offerwall_id
    assert found[0]["changes"]["website"] == [None, "https://signup.example"]
    assert found[0]["actor_kind"] == "system"  # nobody signed in yet: the signup itself


def test_studios_games_credentials_and_budgets(engine, box, trail, act, secrets):
    studio = act(lambda s: studios.create_studio(session=s, name="Orbit"))
    trail.one("studio.created", ("studio", studio.id))
    act(lambda s: studios.rename_studio(session=s, studio_id=studio.id, name="Orbit Games"))
    assert trail.one("studio.renamed", ("studio", studio.id))["changes"] == {
        "name": ["Orbit", "Orbit Games"]
    }
    issued = act(lambda s: games.create_game(session=s, box=box, name="Arena", studio_id=studio.id))
    secrets.append(issued.client_secret)
    found = trail.new()
    assert [e["action"] for e in found] == ["game.created", "game.credential_created"]
    assert all(e["scope_id"] == studio.id for e in found)
    second = act(lambda s: games.add_credential(session=s, box=box, game_id=issued.game_id))
    secrets.append(second.client_secret)
    event = trail.one("game.credential_created", ("game", issued.game_id))
    assert event["changes"]["client_id"] == [None, second.client_id]
    act(
        lambda s: games.revoke_credential(
            session=s, game_id=issued.game_id, client_id=issued.client_id
        )
    )
    trail.one("game.credential_revoked", ("game", issued.game_id))
    act(
        lambda s: budgets.set_game_budget(
            s,
            issued.game_id,
            BudgetIn.model_validate({"amount": "500", "every": "month"}),
        )
    )
    event = trail.one("game.budget_changed", ("game", issued.game_id))
    assert event["changes"]["budget"][0] is None
    no_secret_in(engine, secrets)


def test_missions_quests_pools_and_imports(engine, box, trail, act):
    studio_id = make_studio(engine)
    game_id = make_game(engine, box, studio_id=studio_id).game_id
    trail.new()
    mission = act(
        lambda s: offers.save_mission(
            session=s, game_id=game_id, data=MissionIn.model_validate(mission_data())
        )
    )
    event = trail.one("mission.created", ("mission", mission.id))
    assert event["changes"]["rule_event"] == [None, "GAME_END"]
    assert (event["scope_type"], event["scope_id"]) == ("studio", studio_id)

    edited = mission_data(
        id=mission.id,
        rule={
            "event": "GAME_END",
            "conditions": [{"field": "traits.kills", "op": ">=", "value": 20}],
            "completion": {"kind": "count", "threshold": 1},
        },
    )
    act(
        lambda s: offers.save_mission(
            session=s, game_id=game_id, data=MissionIn.model_validate(edited)
        )
    )
    event = trail.one("mission.edited", ("mission", mission.id))
    before, after = event["changes"]["rule_conditions"]
    assert (before[0]["value"], after[0]["value"]) == (10, 20)
    assert set(event["changes"]) == {"rule_conditions"}

    act(
        lambda s: offers.set_active(
            session=s, kind="mission", offer_id=mission.id, active=False, game_id=game_id
        )
    )
    assert trail.one("mission.archived", ("mission", mission.id))["changes"] == {
        "is_active": [True, False]
    }
    act(
        lambda s: offers.save_pool(
            session=s,
            game_id=game_id,
            data=PoolIn.model_validate({"name": "daily", "size": 2, "every": "day"}),
        )
    )
    pool_event = trail.new()
    assert [e["action"] for e in pool_event] == ["pool.created"]

    imported = OffersFile.model_validate(
        {"gameId": game_id, "missions": [mission_data(title="Imported one")]}
    )
    act(lambda s: offers.import_offers(session=s, data=imported))
    found = trail.new()
    assert [(e["action"], e["target_name"]) for e in found] == [
        ("mission.imported", "Imported one")
    ]


def test_promotions_webhooks_blocklist_and_flags(engine, box, trail, act):
    wall, _ = make_offerwall(engine, box)
    game = make_game(engine, box)
    trail.new()
    promotion = act(
        lambda s: promotions.add(
            s,
            wall.id,
            promotions.PromotionIn.model_validate(
                {
                    "name": "Double weekend",
                    "multiplier": 2,
                    "start": "2030-01-04T00:00:00Z",
                    "end": "2030-01-06T00:00:00Z",
                }
            ),
            by="designer@example.com",
        )
    )
    event = trail.one("promotion.created", ("promotion", promotion.id))
    assert event["changes"]["multiplier"] == [None, "2"]
    act(lambda s: promotions.end(s, promotion.id))
    trail.one("promotion.ended", ("promotion", promotion.id))

    added = act(
        lambda s: webhook_endpoints.add_endpoint(
            session=s,
            box=box,
            game_id=game.game_id,
            url="https://hooks.example/qw",
            allow_private=True,
        )
    )
    endpoint_id = added.endpoint.id
    trail.one("webhook_endpoint.created", ("webhook_endpoint", endpoint_id))
    new_secret = act(
        lambda s: webhook_endpoints.rotate_secret(
            session=s,
            box=box,
            endpoint=s.get(WebhookEndpoint, endpoint_id),
            overlap="none",
            now=utcnow(),
        )
    )
    trail.one("webhook_endpoint.secret_rotated", ("webhook_endpoint", endpoint_id))
    act(
        lambda s: webhook_endpoints.set_status(
            session=s, endpoint=s.get(WebhookEndpoint, endpoint_id), active=False
        )
    )
    assert trail.one("webhook_endpoint.disabled", ("webhook_endpoint", endpoint_id))["changes"] == {
        "status": ["active", "disabled"]
    }
    act(
        lambda s: webhook_endpoints.remove_endpoint(
            session=s, endpoint=s.get(WebhookEndpoint, endpoint_id)
        )
    )
    trail.one("webhook_endpoint.removed", ("webhook_endpoint", endpoint_id))

    row = act(
        lambda s: blocklist.block(
            session=s, kind="ip", value="198.51.100.9", note="farm", actor="designer"
        )
    )
    trail.one("blocklist.added", ("blocked_entry", str(row.id)))
    act(lambda s: blocklist.unblock(session=s, entry_id=row.id))
    assert trail.one("blocklist.removed", ("blocked_entry", str(row.id)))["changes"] == {
        "kind": ["ip", None],
        "note": ["farm", None],
        "value": ["198.51.100.9", None],
    }
    no_secret_in(engine, [added.secret, new_secret])


def test_held_conversions_flagged_one_event_each(engine, box, trail, act):
    wall, _ = make_offerwall(engine, box)
    mission = make_mission(engine, make_game(engine, box).game_id)
    for n in range(3):
        make_conversion(engine, mission_id=mission.id, offerwall=wall, uid=f"player-{n}")
    with engine.begin() as conn:  # held for review, as the screening would
        conn.execute(sa.update(_conversion).values(status="pending", review_due_at=utcnow()))
        held = conn.execute(sa.select(_conversion.c.transaction_id)).all()
    trail.new()
    act(
        lambda s: review.flag(
            session=s,
            transaction_ids=[c.transaction_id for c in held],
            actor="designer@example.com",
            studio_id=None,
        )
    )
    found = trail.new()
    assert [e["action"] for e in found] == ["conversion.flagged"] * 3
    assert {e["target_name"] for e in found} == {c.transaction_id for c in held}


def test_the_master_key_rotation(engine, trail):
    from api.cli.server import rotate_master_key
    from api.core.crypto import SecretBox
    from tests.conftest import MASTER_KEY

    rotating = SecretBox(["a-new-master-key-for-this-test", MASTER_KEY])
    done = rotate_master_key(engine=engine, box=rotating)
    [event] = trail.new()
    assert (event["action"], event["target_id"]) == ("master_key.rotated", done.key_id)
    assert event["changes"] == {"digests": [None, done.digests], "resealed": [None, done.resealed]}
    assert "a-new-master-key" not in json.dumps(event, default=str)


@pytest.fixture
def questwall(db_url, tmp_path, monkeypatch):
    """`questwall …` run in this process on this test's database."""
    from click.testing import CliRunner

    from api.cli import main
    from tests.conftest import MASTER_KEY
    from tests.live import forget_process_settings as clear

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("SECRET_KEY", MASTER_KEY)
    monkeypatch.setenv("QUESTWALL_DATA_DIR", str(tmp_path / "data"))
    clear()

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    yield run
    clear()


def test_commands_record_the_operating_system_user(engine, box, trail, questwall):
    import getpass

    wall, _ = make_offerwall(engine, box)
    trail.new()
    questwall(
        "offerwall", "set-currency", wall.id, "--name", "Gems", "--code", "GEM", "--rate", "100"
    )
    questwall("fraud", "block", "ip", "198.51.100.23", "--note", "a farm")
    questwall("game", "create", "Command Game")
    found = trail.new()
    assert [e["action"] for e in found] == [
        "offerwall.currency_changed",
        "blocklist.added",
        "game.created",
        "game.credential_created",
    ]
    for event in found:
        assert (event["actor_kind"], event["actor_email"]) == ("cli", getpass.getuser())
