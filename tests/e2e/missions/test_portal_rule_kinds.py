"""Every kind of rule built in the real portal's editor, without typing JSON: OR groups with
`in` lists as chips, a total within one group, steps reordered with a time limit, a streak
in a time zone and a count within a window; each saved, opened again with its rule in
words, and saved unchanged without losing a part. What is typed while the server answers
an add or a remove, on a slow connection, is all saved. And the rule tester replaying a
real player's stored events, event by event, with why each passes or not."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect
from sqlmodel import Session, select

from models import Event, Mission
from models.offer_schemas import mission_in
from tests.e2e.conftest import PHONE, looked_at
from tests.e2e.missions.test_portal_editors import designer_with_game

pytestmark = pytest.mark.e2e


def stored(portal, mission_id: str):
    with Session(portal.engine()) as db:
        mission = db.get(Mission, mission_id)
        assert mission is not None
        return mission_in(mission)


def save(designer: Page, summary: str) -> None:
    designer.get_by_role("button", name="Save mission").click()
    toast = designer.get_by_text(re.compile("Mission “Kinds” (created|saved)."))
    expect(toast.last).to_be_visible()  # earlier saves' toasts may still show
    expect(designer.get_by_test_id("rule-summary")).to_have_text("Saved rule: " + summary)


def test_every_kind_of_rule_is_built_saved_and_opened_again(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Rule Kinds")
    designer.goto(portal.url + f"/studio/mission?game={game_id}")
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    designer.get_by_label("Title").fill("Kinds")
    designer.get_by_label("Payout (USD)").fill("1")
    designer.get_by_label("Destination URL").fill("https://kinds.example/")
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731

    # OR groups: a kill on one of two maps (chips), or an assist; a total within one match.
    label("Which events count").select_option("anyOf")
    expect(designer.get_by_test_id("matcher")).to_have_count(2)
    label("Group 1 event name").fill("KILL")
    label("Group 1 condition field 1").fill("traits.map")
    label("Group 1 condition operator 1").select_option("in")
    chips = label("Group 1 condition value 1")
    chips.fill("desert")
    chips.press("Enter")
    expect(designer.get_by_test_id("chip")).to_have_count(1)
    expect(chips).to_have_value("")
    chips.fill("jungle")
    chips.press("Tab")  # leaving the box adds it too
    expect(designer.get_by_test_id("chip")).to_have_count(2)
    label("Group 2 event name").fill("ASSIST")
    designer.get_by_role("button", name="Add group").click()
    expect(designer.get_by_test_id("matcher")).to_have_count(3)
    label("Group 3 event name").fill("WIN")
    designer.get_by_role("button", name="Remove Group 3").click()
    expect(designer.get_by_test_id("matcher")).to_have_count(2)
    # What was typed before the builder was drawn again is all there.
    expect(label("Group 1 event name")).to_have_value("KILL")
    expect(label("Group 2 event name")).to_have_value("ASSIST")
    expect(designer.get_by_test_id("chip")).to_have_text(["desert", "jungle"])
    label("Completion").select_option("sum")
    expect(label("Time zone")).to_have_count(0)  # only days and streak take one
    label("Completion threshold").fill("10")
    label("Completion field").fill("value")
    label("Within one group (optional)").fill("groupId")
    save(
        designer,
        "(KILL where map is one of “desert”, “jungle”) or ASSIST, total of value ≥ 10 in one group",
    )
    mission_id = re.search(r"mission=([0-9a-f-]+)", designer.url).group(1)
    first = stored(portal, mission_id)
    assert first.rule.model_dump(exclude_defaults=True) == {
        "anyOf": [
            {
                "event": "KILL",
                "conditions": [{"field": "traits.map", "op": "in", "value": ["desert", "jungle"]}],
            },
            {"event": "ASSIST"},
        ],
        "per": "groupId",
        "completion": {"kind": "sum", "threshold": 10.0, "field": "value"},
    }
    # Opened again and saved unchanged: the same definition, nothing dropped.
    designer.reload()
    expect(label("Group 2 event name")).to_have_value("ASSIST")
    expect(designer.get_by_test_id("chip")).to_have_text(["desert", "jungle"])
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Kinds” saved.").last).to_be_visible()
    assert stored(portal, mission_id) == first

    # Steps in order: the groups become steps; a third one added, then moved up.
    label("Which events count").select_option("steps")
    expect(label("Step 2 event name")).to_have_value("ASSIST")
    expect(label("Completion")).to_have_count(0)  # a sequence completes at its last step
    designer.get_by_role("button", name="Add step").click()
    label("Step 3 event name").fill("LEVEL_UP")
    designer.get_by_role("button", name="Move Step 3 up").click()
    expect(label("Step 2 event name")).to_have_value("LEVEL_UP")
    expect(label("Step 3 event name")).to_have_value("ASSIST")
    label("All steps within (optional)").fill("2")
    label("All steps within unit").select_option("3600")
    save(
        designer,
        "KILL where map is one of “desert”, “jungle”, then LEVEL_UP, then ASSIST, within 2 hours",
    )
    looked_at(designer, "rule-kinds-steps")
    designer.reload()
    expect(label("All steps within (optional)")).to_have_value("2")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Kinds” saved.").last).to_be_visible()
    assert stored(portal, mission_id).rule.within.seconds == 7200

    # One event: a 7-day streak in Berlin, its time zone picked from the list.
    label("Which events count").select_option("event")
    expect(designer.get_by_test_id("matcher")).to_have_count(1)
    label("Event name").fill("LOGIN")
    designer.get_by_role("button", name="Remove condition 1").click()
    # Drawn again without it (as a person sees before going on): an empty row.
    expect(label("Condition field 1")).to_have_value("")
    label("Completion").select_option("streak")
    expect(label("Completion field")).to_have_count(0)
    label("Completion threshold").fill("7")
    expect(designer.locator("#time-zones option[value='Europe/Berlin']")).to_have_count(1)
    label("Time zone").fill("Europe/Berlin")
    save(designer, "a 7-day streak of LOGIN (Europe/Berlin)")

    # A count within a window of 90 minutes.
    label("Completion").select_option("count")
    expect(label("Within one group (optional)")).to_have_value("")  # the saved rule has none
    label("Completion threshold").fill("3")
    label("Window (optional)").fill("90")
    label("Window unit").select_option("60")
    save(designer, "LOGIN, 3 times within 90 minutes")
    designer.reload()
    expect(label("Window (optional)")).to_have_value("90")
    expect(label("Window unit")).to_have_value("60")
    assert stored(portal, mission_id).rule.window.seconds == 5400
    designer.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    looked_at(designer, "rule-kinds-window")


class SlowAnswers:
    """The page's websocket to the portal through the test: inside `held()` what the
    server sends waits, as it would on a slow connection, and reaches the page, in order,
    when the block ends. (A route's delay is for HTTP; the portal's events and their
    answers go over this websocket.) Set up before the page opens its socket."""

    def __init__(self, page: Page):
        self.holding = False
        self.waiting: list[str | bytes] = []
        self.page_side: WebSocketRoute | None = None
        page.route_web_socket(re.compile(r"/_event"), self._connect)

    def _connect(self, ws: WebSocketRoute) -> None:
        self.page_side = ws
        server = ws.connect_to_server()
        server.on_message(lambda message: self._from_server(ws, message))

    def _from_server(self, ws: WebSocketRoute, message: str | bytes) -> None:
        if self.holding and ws is self.page_side:
            self.waiting.append(message)
        else:
            ws.send(message)

    @contextmanager
    def held(self) -> Iterator[None]:
        self.holding = True
        try:
            yield
        finally:
            self.holding = False
            waiting, self.waiting = self.waiting, []
            assert self.page_side is not None
            for message in waiting:
                self.page_side.send(message)


def test_what_is_typed_while_the_server_answers_an_add_or_remove_is_saved(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Slow Builder")
    slow = SlowAnswers(designer)
    designer.goto(portal.url + f"/studio/mission?game={game_id}")
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731
    designer.get_by_label("Title").fill("Slow")
    designer.get_by_label("Payout (USD)").fill("1")
    designer.get_by_label("Destination URL").fill("https://slow.example/")
    label("Event name").fill("MATCH_END")
    label("Condition field 1").fill("value")
    conditions = designer.get_by_test_id("condition")

    # A condition added; its answer is slow, and meanwhile the first one's value is typed.
    with slow.held():
        designer.get_by_role("button", name="Add condition").click()
        label("Condition value 1").fill("1000")
        expect(conditions).to_have_count(1)  # the builder is not drawn again yet
    expect(conditions).to_have_count(2)
    expect(label("Condition value 1")).to_have_value("1000")
    label("Condition field 2").fill("traits.map")
    label("Condition operator 2").select_option("==")
    label("Condition value 2").fill("dust")

    # Three groups; the second removed while the third's event is typed and left, and the
    # mission saved before the answer comes: the form the browser read then is the old one.
    label("Which events count").select_option("anyOf")
    expect(designer.get_by_test_id("matcher")).to_have_count(2)
    label("Group 2 event name").fill("ASSIST")
    designer.get_by_role("button", name="Add group").click()
    expect(designer.get_by_test_id("matcher")).to_have_count(3)
    with slow.held():
        designer.get_by_role("button", name="Remove Group 2").click()
        label("Group 3 event name").fill("WIN_RANKED")
        label("Group 3 event name").press("Tab")
        expect(designer.get_by_test_id("matcher")).to_have_count(3)
        designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Slow” created.")).to_be_visible()
    expect(designer.get_by_test_id("matcher")).to_have_count(2)
    expect(label("Group 2 event name")).to_have_value("WIN_RANKED")
    with Session(portal.engine()) as db:
        saved = db.exec(select(Mission).where(Mission.game_id == game_id)).one()
        rule = mission_in(saved).rule
    assert rule.model_dump(exclude_defaults=True)["anyOf"] == [
        {
            "event": "MATCH_END",
            "conditions": [
                {"field": "value", "op": ">=", "value": 1000},
                {"field": "traits.map", "op": "==", "value": "dust"},
            ],
        },
        {"event": "WIN_RANKED"},
    ]


def test_the_tester_replays_a_real_players_events(portal, new_page):
    width, height = PHONE
    designer, game_id, _, _ = designer_with_game(
        portal, new_page, "Replay Game", width=width, height=height
    )
    start = datetime.now(UTC) - timedelta(days=3)
    with portal.setting_up() as (session, _):
        for n, (user_id, name, value) in enumerate(
            [
                ("ann", "MATCH_END", 1200),
                ("ann", "LOGIN", None),  # a name the rule does not read
                ("ann", "MATCH_END", 300),
                ("bob", "MATCH_END", 5000),  # another player
                ("ann", "MATCH_END", 1500),
                ("ann", "MATCH_END", 1100),
                ("ann", "MATCH_END", 2000),
            ]
        ):
            session.add(
                Event(
                    game_id=game_id,
                    user_id=user_id,
                    name=name,
                    value=value,
                    time=start + timedelta(minutes=n),
                )
            )
    designer.get_by_role("button", name="Rule tester").click()
    expect(designer.get_by_label("Event name")).to_have_value("MATCH_END")
    expect(designer.locator("#player-ids option[value=ann]")).to_have_count(1)
    designer.get_by_label("A player's stored events").check()
    designer.get_by_label("Game user id").fill("ann")
    designer.get_by_role("button", name="Run").click()

    steps = designer.get_by_test_id("test-step")
    expect(steps).to_have_count(5)
    expect(designer.get_by_test_id("replay-note")).to_contain_text("5 events player ann sent from")
    expect(steps.nth(1)).to_contain_text("fails the filter")
    expect(steps.nth(1)).to_contain_text("value ≥ 1000 does not hold (value is 300)")
    expect(designer.get_by_test_id("progress")).to_have_text(
        ["1 / 3", "0 / 3", "1 / 3", "2 / 3", "3 / 3"]
    )
    expect(steps.nth(4)).to_contain_text("completes")
    expect(designer.get_by_test_id("completes-at")).to_contain_text("completes at event 5")
    looked_at(designer, "rule-tester-replay")

    # A player with nothing in the range says so.
    designer.get_by_label("Game user id").fill("nobody")
    designer.get_by_role("button", name="Run").click()
    expect(designer.get_by_test_id("replay-note")).to_contain_text(
        "Player nobody sent no event the rule reads"
    )
    expect(steps).to_have_count(0)


def test_a_draft_mission_is_tried_on_the_games_history(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "History Game")
    # Noon two days ago: the kills a few minutes apart fall on one UTC day at any hour.
    start = (datetime.now(UTC) - timedelta(days=2)).replace(hour=12, minute=0)
    with portal.setting_up() as (session, _):
        # ann kills twice in 10 minutes, bob three times, cat once; an old kill is not read.
        for user_id, minutes in [("ann", 0), ("ann", 10), ("bob", 0), ("bob", 5), ("bob", 6)]:
            time = start + timedelta(minutes=minutes)
            session.add(Event(game_id=game_id, user_id=user_id, name="KILL", time=time))
        session.add(Event(game_id=game_id, user_id="cat", name="KILL", time=start))
        old = datetime.now(UTC) - timedelta(days=40)
        session.add(Event(game_id=game_id, user_id="dan", name="KILL", time=old))
    designer.goto(portal.url + f"/studio/mission?game={game_id}")
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    designer.get_by_label("Title").fill("Two kills")
    designer.get_by_label("Payout (USD)").fill("0.50")
    designer.get_by_label("Destination URL").fill("https://history.example/")
    designer.get_by_label("Event name", exact=True).fill("KILL")
    designer.get_by_label("Completion threshold").fill("2")
    designer.get_by_label("Days", exact=True).fill("abc")
    designer.get_by_role("button", name="Try on history").click()
    expect(designer.locator("#historyDays-error")).to_contain_text("whole number of days")
    designer.get_by_label("Days", exact=True).fill("30")
    designer.get_by_role("button", name="Try on history").click()

    figures = designer.get_by_test_id("history-figures")
    expect(figures).to_contain_text("3 (6 events)")  # dan's kill is older than 30 days
    expect(figures).to_contain_text("Players who would complete it2 (67%)")
    expect(figures).to_contain_text("Time to complete, median7 min 30 s")  # 10 and 5 min
    expect(figures).to_contain_text("$1.00")
    expect(designer.get_by_test_id("history-days")).to_contain_text(": 2")
    expect(designer.get_by_test_id("history-progress")).to_contain_text("The last 30 days")
    looked_at(designer, "try-on-history")
    with Session(portal.engine()) as db:  # nothing was saved
        assert db.exec(select(Mission).where(Mission.game_id == game_id)).first() is None
