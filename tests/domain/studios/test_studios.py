"""Studios (`api/studios/studios.py`): creating one and its refusals, adding designers,
the staff's list, the games an account manages and a game's credentials (SQLite and
PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from api.accounts import AccountError
from api.core.db import new_session, write_session
from api.studios import games, studios
from models import Game, Role, User
from portal.studios.games_state import credential_line
from tests.factories import PASSWORD, make_account, make_game, make_studio


def _designer(engine: Engine, studio_id: str, email: str, password: str = PASSWORD) -> User:
    with write_session(engine) as session:
        return studios.add_designer(
            session=session, studio_id=studio_id, email=email, password=password, name=" Dee "
        )


def _refusal(engine: Engine, make) -> AccountError:
    with pytest.raises(AccountError) as info, write_session(engine) as session:
        make(session)
    return info.value


def test_a_studio_name_is_stripped(engine):
    studio_id = make_studio(engine, "  Northwind Games  ")
    with new_session(engine) as session:
        assert [row.name for row in studios.list_studios(session=session)] == ["Northwind Games"]
        assert [row.id for row in studios.list_studios(session=session)] == [studio_id]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("A", "2 to 200 characters"),
        ("   ", "2 to 200 characters"),
        ("x" * 201, "2 to 200 characters"),
        (" Northwind ", "exists"),  # the same name once stripped
    ],
)
def test_a_studio_name_is_refused(engine, name, message):
    make_studio(engine, "Northwind")
    error = _refusal(engine, lambda session: studios.create_studio(session=session, name=name))
    assert message in str(error) and error.field == "name"
    with new_session(engine) as session:
        assert len(studios.list_studios(session=session)) == 1  # nothing was added


def test_a_designer_belongs_to_the_studio_they_are_added_to(engine):
    studio_id = make_studio(engine)
    user = _designer(engine, studio_id, "Dee@Example.com")
    assert (user.role, user.studio_id, user.offerwall_id) == (Role.DESIGNER, studio_id, None)
    assert (user.email, user.name) == ("dee@example.com", "Dee")
    assert user.password_hash != PASSWORD


def test_a_designer_is_refused_for_an_unknown_studio_a_taken_address_or_a_weak_password(
    engine,
):
    studio_id = make_studio(engine)
    _designer(engine, studio_id, "dee@example.com")

    def add(studio: str, email: str, password: str = PASSWORD):
        return lambda session: studios.add_designer(
            session=session, studio_id=studio, email=email, password=password
        )

    unknown = _refusal(engine, add("no-such-studio", "new@example.com"))
    assert (str(unknown), unknown.field) == ("No such studio.", "studio")
    taken = _refusal(engine, add(studio_id, "DEE@example.com"))
    assert taken.field == "email"
    weak = _refusal(engine, add(studio_id, "new@example.com", "short"))
    assert weak.field == "password"
    with new_session(engine) as session:
        [row] = studios.list_studios(session=session)
    assert row.designers == "dee@example.com"


def test_the_list_names_each_studios_designers_and_counts_its_games(engine, box):
    zeta, alpha = make_studio(engine, "Zeta"), make_studio(engine, "Alpha")
    make_studio(engine, "Empty")
    _designer(engine, zeta, "zoe@example.com")
    _designer(engine, zeta, "adam@example.com")
    _designer(engine, alpha, "al@example.com")
    make_game(engine, box, "Zeta One", studio_id=zeta)
    make_game(engine, box, "Zeta Two", studio_id=zeta)
    make_game(engine, box, "No studio")  # created from the CLI: no studio's
    with new_session(engine) as session:
        listed = studios.list_studios(session=session)
    assert [(r.name, r.designers, r.games) for r in listed] == [
        ("Alpha", "al@example.com", 0),
        ("Empty", "", 0),
        ("Zeta", "adam@example.com, zoe@example.com", 2),
    ]


def test_a_designer_sees_only_their_studios_games_and_staff_see_all(engine, box):
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Arena A", studio_id=studio_a).game_id
    game_b = make_game(engine, box, "Arena B", studio_id=studio_b).game_id
    loose = make_game(engine, box, "No studio").game_id
    with new_session(engine) as session:
        for_b = studios.games_for(
            session=session, account=make_account(Role.DESIGNER, studio_id=studio_b)
        )
        for_staff = studios.games_for(session=session, account=make_account(Role.STAFF))
    assert [(g.id, g.name, g.studio, g.live_credentials) for g in for_b] == [
        (game_b, "Arena B", "Studio B", 1)
    ]
    assert {(g.id, g.studio) for g in for_staff} == {
        (game_a, "Studio A"),
        (game_b, "Studio B"),
        (loose, ""),
    }


def test_games_count_only_live_credentials_and_list_every_credential_in_order(engine, box):
    studio_id = make_studio(engine)
    first = make_game(engine, box, studio_id=studio_id)
    with write_session(engine) as session:
        second = games.rotate_credential(session=session, box=box, game_id=first.game_id)
        third = games.rotate_credential(
            session=session, box=box, game_id=first.game_id, revoke_client_id=first.client_id
        )
    with new_session(engine) as session:
        [row] = studios.games_for(
            session=session, account=make_account(Role.DESIGNER, studio_id=studio_id)
        )
        game = session.get(Game, first.game_id)
        assert game is not None
        listed = [credential_line(c) for c in studios.credentials(session=session, game=game)]
    assert row.live_credentials == 2
    assert [c.client_id for c in listed] == [first.client_id, second.client_id, third.client_id]
    assert listed[0].revoked_at.endswith(" UTC")
    assert [c.revoked_at for c in listed[1:]] == ["", ""]


def test_a_studio_is_renamed_and_its_designers_follow(engine):
    studio_id = make_studio(engine, "Northwind")
    _designer(engine, studio_id, "dee@example.com")
    with write_session(engine) as session:
        studios.rename_studio(session=session, studio_id=studio_id, name="  Southwind ")
    with new_session(engine) as session:
        [row] = studios.list_studios(session=session)
    assert (row.id, row.name, row.designers) == (studio_id, "Southwind", "dee@example.com")


@pytest.mark.parametrize("name", ["Eastwind", " eastwind ", "x"])
def test_a_rename_to_a_taken_or_invalid_name_is_refused_beside_the_field(engine, name):
    studio_id = make_studio(engine, "Northwind")
    make_studio(engine, "Eastwind")
    error = _refusal(
        engine, lambda s: studios.rename_studio(session=s, studio_id=studio_id, name=name)
    )
    assert error.field == "name"
    with new_session(engine) as session:
        assert {r.name for r in studios.list_studios(session=session)} == {"Northwind", "Eastwind"}


def test_a_studio_may_keep_its_own_name_in_other_letters(engine):
    studio_id = make_studio(engine, "Northwind")
    with write_session(engine) as session:
        assert studios.rename_studio(session=session, studio_id=studio_id, name="NorthWind").name
