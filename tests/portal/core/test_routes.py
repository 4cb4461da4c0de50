"""The portal's route builders and the sign-in's `next`, which must stay on this site."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from portal import routes


@pytest.mark.parametrize(
    "attempt",
    [
        "//evil.example",
        "//evil.example/staff/publishers",
        "https://evil.example",
        "https://evil.example/login",
        "/\\evil.example",
        "javascript:alert(1)",
        "evil.example",
        "",
        None,
    ],
)
def test_next_refuses_anything_but_a_path_on_this_site(attempt):
    assert routes.safe_next(attempt, routes.GAMES) == routes.GAMES


def test_next_keeps_a_path_with_its_query():
    assert routes.safe_next("/studio/game?game=g1", routes.HOME) == "/studio/game?game=g1"


def test_the_sign_in_link_carries_the_page_to_come_back_to():
    # The page's own query is encoded, so its `&` does not end `next`.
    link = routes.login_for("/studio/mission?game=g1&mission=m1")
    assert link == "/login?next=/studio/mission%3Fgame%3Dg1%26mission%3Dm1"
    assert parse_qs(urlsplit(link).query)["next"] == ["/studio/mission?game=g1&mission=m1"]


def test_builders_make_the_paths_the_pages_register():
    assert routes.game("g1") == "/studio/game?game=g1"
    assert routes.missions("g1") == "/studio/missions?game=g1"
    assert routes.mission("g1", "m1") == "/studio/mission?game=g1&mission=m1"
    assert routes.quest("g1", "q1") == "/studio/quest?game=g1&quest=q1"
    assert routes.tester("g1", "m1") == "/studio/tester?game=g1&mission=m1"
    assert routes.publisher("o1") == "/publisher?offerwall=o1"
    assert routes.with_game(routes.TESTER, "g1") == "/studio/tester?game=g1"
