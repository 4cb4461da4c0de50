"""The publisher's offer catalog (`api/listing/catalog.py`): the offers the
offers API lists for their offerwall, with payouts in its currency, caps left, expiry,
targeting and a tracking link with `{uid}`; searchable; closed to a publisher not approved
(SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Account, NotApproved
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.listing import catalog as listing_catalog
from api.publishers import OfferwallError
from models import Offerwall, Role
from models.tables import mission as _mission
from models.types import utcnow
from portal.listing.state import CatalogCard, catalog_card
from tests.factories import (
    make_account,
    make_game,
    make_mission,
    make_offerwall,
    make_paying_offerwall,
    make_quest,
    mission_data,
)

BASE = "https://questwall.example"


@dataclass(frozen=True)
class Catalog:
    wall: Offerwall
    capped_left: str  # a mission with 3 of its 10 conversions used
    targeted: str
    quest: str


@pytest.fixture
def catalog(engine: Engine, box: SecretBox) -> Catalog:
    game = make_game(engine, box).game_id
    ends = (utcnow() + timedelta(days=9)).replace(microsecond=0)
    capped = make_mission(engine, game, title="Win 10 duels", payout="0.505", cap=10).id
    targeted = make_mission(
        engine,
        game,
        title="Reach level 5",
        payout="2",
        thumbnail="https://cdn.example/level5.png",
        operatingSystem=["Android", "iOS"],
        geotargeting={"countriesInclude": ["US", "CA"]},
        tags=["levels"],
        expirationDate=ends.isoformat(),
    ).id
    make_mission(engine, game, title="Closed", isActive=False)
    make_mission(
        engine, game, title="Over", expirationDate=(utcnow() - timedelta(days=1)).isoformat()
    )
    full = make_mission(engine, game, title="Full", cap=1).id
    quest = make_quest(
        engine,
        game,
        [mission_data(title="Step one", payout="1"), mission_data(title="Step two", payout="0.5")],
        name="Season opener",
        startCap=5,
        geotargeting={"countriesExclude": ["DE"]},
    ).id
    with write_session(engine) as session:
        session.execute(sa.update(_mission).where(_mission.c.id == capped).values(conversions=3))
        session.execute(sa.update(_mission).where(_mission.c.id == full).values(conversions=1))
    return Catalog(make_paying_offerwall(engine, box, name="Gem wall"), capped, targeted, quest)


def _offers(engine: Engine, account: Account, **kwargs) -> list[CatalogCard]:
    """The offers as the catalog page shows them."""
    with new_session(engine) as session:
        found = listing_catalog.offer_catalog(
            session=session, account=account, base_url=BASE, now=utcnow(), **kwargs
        )
    return [catalog_card(offer) for offer in found]


def _publisher(wall: Offerwall) -> Account:
    return make_account(Role.PUBLISHER, offerwall_id=wall.id)


def test_the_catalog_lists_what_the_offers_api_lists_newest_first(engine, catalog):
    offers = _offers(engine, _publisher(catalog.wall))
    # Not the inactive, expired or capped missions, nor the quest's missions on their own.
    assert [o.id for o in offers] == [catalog.quest, catalog.targeted, catalog.capped_left]


def test_each_offer_shows_payout_caps_expiry_targeting_and_a_tracking_link(engine, catalog):
    by_id = {o.id: o for o in _offers(engine, _publisher(catalog.wall))}
    owid = catalog.wall.owid
    capped, targeted, quest = (
        by_id[catalog.capped_left],
        by_id[catalog.targeted],
        by_id[catalog.quest],
    )
    # 0.505 USD is 50.5 Gems, rounded half up as its postback will carry it; the
    # dollars in cents, rounded the same way.
    assert (capped.payout, capped.payout_usd) == ("51 GEM", "$0.51")
    assert capped.caps_left == "7 of 10 conversions left"
    assert (capped.expires, capped.targeting) == ("No end date", "Every device · Every country")
    assert capped.tracking_link == f"{BASE}/missions/{capped.id}?owid={owid}&uid={{uid}}"
    assert (targeted.payout, targeted.caps_left) == ("200 GEM", "No cap")
    assert targeted.targeting == "Android, iOS · CA, US"
    assert targeted.thumbnail == "https://cdn.example/level5.png"
    assert targeted.expires.startswith("Ends ") and targeted.expires.endswith(" UTC")
    assert (quest.kind, quest.name, quest.missions) == ("quest", "Season opener", 2)
    assert (quest.payout, quest.payout_usd) == ("150 GEM", "$1.50")
    assert quest.caps_left == "5 of 5 starts left"
    assert quest.targeting == "Every device · Every country but DE"
    assert quest.tracking_link == f"{BASE}/quests/{quest.id}?owid={owid}&uid={{uid}}"


def test_the_catalog_is_searched_by_name_description_or_tag(engine, catalog):
    publisher = _publisher(catalog.wall)
    assert [o.name for o in _offers(engine, publisher, search="DUELS")] == ["Win 10 duels"]
    assert [o.name for o in _offers(engine, publisher, search="levels")] == ["Reach level 5"]
    assert _offers(engine, publisher, search="nothing like it") == []


def test_a_publisher_not_approved_has_no_catalog(engine, box, catalog):
    pending, _ = make_offerwall(engine, box, name="Waiting", approve=False)
    with pytest.raises(NotApproved):
        _offers(engine, _publisher(pending))
    staff = make_account(Role.STAFF)
    with pytest.raises(OfferwallError, match="once it is approved"):
        _offers(engine, staff, requested=pending.id)


def test_staff_open_a_publishers_catalog_with_its_currency(engine, catalog):
    offers = _offers(engine, make_account(Role.STAFF), requested=catalog.wall.id)
    assert {o.payout for o in offers} == {"51 GEM", "200 GEM", "150 GEM"}


def test_a_missions_caps_per_period_and_per_offerwall_are_in_its_caps(engine, box):
    from tests.factories import make_game, make_mission, make_offerwall

    wall, _ = make_offerwall(engine, box)
    game = make_game(engine, box).game_id
    make_mission(
        engine,
        game,
        cap=100,
        periodCaps={"day": 5, "week": 20, "timeZone": "UTC"},
        capPerOfferwall=1000,
    )
    [offer] = _offers(engine, _publisher(wall))
    assert (
        offer.caps_left == "100 of 100 conversions left · 5 a day · 20 a week · 1,000 per offerwall"
    )
