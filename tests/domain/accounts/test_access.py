"""Who reaches which game and which offer: a designer of studio B sees nothing of
studio A, with the same refusal whether the row exists or not."""

from __future__ import annotations

import pytest

from api.accounts import Account, Forbidden, access
from api.core.db import new_session, write_session
from api.core.refusals import DomainError, SignedOut
from api.missions import OfferError, offers
from api.studios import studios
from models import Role
from tests.factories import make_game, make_mission, make_quest, mission_data


def _designer_of(engine, studio_name: str) -> Account:
    with write_session(engine) as session:
        studio = studios.create_studio(session=session, name=studio_name)
        return Account("d-" + studio.id, "d@example.com", "D", Role.DESIGNER, studio.id, None)


def _game_of(engine, box, account: Account) -> str:
    game_id = make_game(engine, box).game_id
    with write_session(engine) as session:
        game = access.game_for(
            session=session,
            account=Account("s", "s@example.com", "S", Role.STAFF, None, None),
            game_id=game_id,
        )
        game.studio_id = account.studio_id
    return game_id


@pytest.fixture
def studio_a(engine, box):
    """Studio A's designer, game, mission and quest."""
    designer = _designer_of(engine, "Studio A")
    game_id = _game_of(engine, box, designer)
    mission = make_mission(engine, game_id)
    quest = make_quest(engine, game_id, [mission_data(title="Step one")])
    return designer, game_id, mission.id, quest.id


def test_a_designer_reaches_their_own_studios_offers(engine, studio_a):
    designer, game_id, mission_id, quest_id = studio_a
    with new_session(engine) as session:
        game = access.game_for(session=session, account=designer, game_id=game_id)
        mission = offers.mission_of_game(session=session, game_id=game.id, mission_id=mission_id)
        quest = offers.quest_of_game(session=session, game_id=game.id, quest_id=quest_id)
        assert (mission.id, quest.id) == (mission_id, quest_id)


def test_a_designer_of_studio_b_cannot_reach_studio_a(engine, box, studio_a):
    _, game_a, mission_a, _ = studio_a
    other = _designer_of(engine, "Studio B")
    game_b = _game_of(engine, box, other)
    with new_session(engine) as session:
        with pytest.raises(Forbidden, match="No such game"):
            access.game_for(session=session, account=other, game_id=game_a)
        # Through their own game, studio A's mission is as unknown as a made-up id.
        own = access.game_for(session=session, account=other, game_id=game_b)
        for mission_id in (mission_a, "no-such-mission"):
            with pytest.raises(OfferError, match="No such mission"):
                offers.mission_of_game(session=session, game_id=own.id, mission_id=mission_id)


def test_no_account_is_signed_out_not_forbidden():
    with pytest.raises(SignedOut) as refused:
        access.require(None)
    assert isinstance(refused.value, DomainError)
    assert not isinstance(refused.value, Forbidden)


def test_every_service_refusal_shares_one_base():
    from api.accounts import AccountError
    from api.missions import OfferError
    from api.missions.forms import FormError
    from api.publishers import OfferwallError
    from api.reports.ranges import ReportError
    from api.studios.games import CredentialError, GameError

    for refusal in (
        AccountError,
        FormError,
        CredentialError,
        GameError,
        OfferError,
        OfferwallError,
        ReportError,
        Forbidden,
        SignedOut,
    ):
        assert issubclass(refusal, DomainError), refusal
    assert AccountError("Taken.", "email").field_errors() == {"email": "Taken."}
    assert OfferwallError("No.").field_errors() == {}
