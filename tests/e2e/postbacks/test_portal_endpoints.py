"""A publisher's postback endpoint in the real portal: the banner of a paused endpoint with
its last errors, fixing the URL and resuming (every waiting postback delivered once), the
API key rotated with a grace period, the signing secret shown once and then only rotated,
and the same steps refused by hand for another publisher's offerwall."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from api.conversions import ledger as conversions
from api.core.config import Settings
from api.core.db import write_session
from api.postbacks import endpoint as endpoints
from api.postbacks.signature import verify
from api.publishers import offerwalls
from models import Click, Conversion, Offerwall, Postback
from models.types import utcnow
from portal import routes
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import (
    SPY,
    expect_refusals,
    form,
    handler_name,
    send_event,
)
from tests.e2e.steps import (
    PUBLISHER_PASSWORD,
    approved_publisher_signed_in,
    convert,
    offers_status,
    reveal_key,
    rotate,
    sign_in,
)
from tests.receiver import Receiver, running_receiver

pytestmark = pytest.mark.e2e

DESKTOP, PHONE = (1366, 900), (390, 844)


def shots(page: Page, name: str) -> None:
    """The page as a 1366 px and a 390 px wide screen show it, neither scrolling sideways
    (test-artifacts/screenshots/endpoints-<name>-<desktop|phone>.png)."""
    size = page.viewport_size
    for suffix, (width, height) in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        screenshot(page, f"endpoints-{name}-{suffix}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"
    if size:
        page.set_viewport_size(size)


def wall_named(portal, company: str) -> Offerwall:
    with Session(portal.engine()) as db:
        return db.exec(select(Offerwall).where(Offerwall.name == company)).one()


def approved_publisher(portal, new_page, company: str) -> tuple[Page, Offerwall]:
    """`company`'s publisher, approved and signed in, in the workspace."""
    publisher = new_page(*DESKTOP)
    return publisher, approved_publisher_signed_in(portal, publisher, company)


def wait_for(check, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def postbacks_of(portal, wall: Offerwall) -> list[Postback]:
    with Session(portal.engine()) as db:
        return list(db.exec(select(Postback).where(Postback.offerwall_id == wall.id)).all())


def pause(portal, wall: Offerwall) -> None:
    """What the served dispatcher does after a day of failures, with a threshold of 0 s:
    one more failed attempt counted, and the offerwall paused."""
    settings = Settings(
        DATABASE_URL=portal.env["DATABASE_URL"],
        SECRET_KEY=portal.env["SECRET_KEY"],
        QUESTWALL_DATA_DIR=portal.env["QUESTWALL_DATA_DIR"],
        POSTBACK_PAUSE_AFTER_SECONDS=0,
        POSTBACK_PAUSE_MIN_FAILURES=1,
    )
    engine = portal.engine()
    with write_session(engine) as session:
        failed = endpoints.Outcome(wall.id, utcnow(), True, "HTTP 500")
        notices = endpoints.record_outcomes(session, [failed], settings, utcnow())
    engine.dispose()
    assert [n.event for n in notices] == ["endpoint.paused"]


def template(receiver: Receiver) -> str:
    return receiver.url + "/pb?tx={transaction_id}&status={status}"


def save_postback_url(page: Page, url: str) -> None:
    page.get_by_label("URL", exact=True).fill(url)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Postback URL saved.")).to_be_visible()


def send_test_postback(page: Page, receiver: Receiver) -> None:
    before = len(receiver.requests)
    page.get_by_role("button", name="Send test postback").click()
    expect(page.get_by_test_id("test-status")).to_have_text("200")
    wait_for(lambda: len(receiver.requests) == before + 1)


def test_a_paused_endpoint_shows_its_errors_and_resumes_once_the_url_is_fixed(portal, new_page):
    publisher, wall = approved_publisher(portal, new_page, "Stalled Wall")
    with running_receiver() as broken, running_receiver() as fixed:
        broken.statuses = [500] * 100
        with portal.setting_up() as (session, _):
            offerwalls.set_postback_url(
                session=session,
                offerwall=offerwalls.get_offerwall(session=session, ref=wall.owid),
                url=template(broken),
            )
        for n in (1, 2, 3):
            convert(portal, wall.owid, f"stalled-{n}")
        # The served dispatcher tries each once (500), then waits to retry.
        wait_for(lambda: sum(p.attempts >= 1 for p in postbacks_of(portal, wall)) == 3)

        # Failing, not paused: a milder warning with the latest answer.
        publisher.goto(portal.url + routes.PUBLISHER)
        failing = publisher.get_by_test_id("failing-banner")
        expect(failing).to_contain_text("delivery attempts failed")
        expect(failing).to_contain_text("HTTP 500")
        expect(publisher.get_by_test_id("paused-banner")).to_have_count(0)
        shots(publisher, "failing-banner")

        pause(portal, wall)
        sent_before_fix = len(broken.requests)
        publisher.reload()
        banner = publisher.get_by_test_id("paused-banner")
        expect(banner).to_contain_text("Postbacks are paused")
        expect(banner).to_contain_text("3 postbacks waiting")
        expect(banner.get_by_test_id("endpoint-error").first).to_contain_text("HTTP 500")
        expect(banner.get_by_test_id("endpoint-error").first).to_contain_text("try again")
        shots(publisher, "paused-banner")

        # Staff see it on their dashboard, and it leads to the publisher's workspace.
        staff = new_page(*DESKTOP)
        sign_in(staff, portal.url, *portal.staff)
        paused = staff.get_by_test_id("paused-endpoint").filter(has_text="Stalled Wall")
        expect(paused).to_contain_text("3 queued")
        shots(staff, "staff-dashboard")
        paused.get_by_role("link", name="Workspace").click()
        expect(staff).to_have_url(re.compile(rf"/publisher/postback/?\?offerwall={wall.id}"))
        expect(staff.get_by_test_id("paused-banner")).to_contain_text("3 postbacks waiting")

        # The publisher fixes the URL, tests it, and resumes.
        publisher.goto(portal.url + routes.PUBLISHER_POSTBACK)
        expect(publisher.get_by_test_id("paused-banner")).to_be_visible()
        # The page has loaded the saved URL: typed sooner, the load would draw the saved
        # one over it, and Save would save the broken URL again.
        expect(publisher.get_by_label("URL", exact=True)).to_have_value(template(broken))
        save_postback_url(publisher, template(fixed))
        send_test_postback(publisher, fixed)
        assert "tx=test-" in fixed.requests[0]
        publisher.get_by_role("button", name="Resume deliveries").click()
        publisher.get_by_role("alertdialog").get_by_role("button", name="Resume").click()
        expect(publisher.get_by_text("Deliveries resumed: 3 waiting postbacks")).to_be_visible()
        expect(publisher.get_by_test_id("paused-banner")).to_have_count(0)

        wait_for(lambda: {p.status for p in postbacks_of(portal, wall)} == {"delivered"})
        time.sleep(1)  # room for a second delivery of any of them, had there been one
        received = fixed.requests[1:]
        assert len(broken.requests) == sent_before_fix
        with Session(portal.engine()) as db:
            made = set(
                db.exec(select(Conversion.transaction_id).where(Conversion.offerwall_id == wall.id))
            )
        sent = [parse_qs(urlsplit(r).query)["tx"][0] for r in received]
        assert sorted(sent) == sorted(made) and len(sent) == 3  # each exactly once

        # One of them is reversed: a row of its own in the log, beside its conversion's.
        reversed_tx = reverse(portal, wall, "stalled-1")
        wait_for(lambda: len(fixed.requests) == 5)
        query = parse_qs(urlsplit(fixed.requests[4]).query)
        assert (query["tx"], query["status"]) == ([reversed_tx], ["reversed"])
        wait_for(lambda: [p.status for p in postbacks_of(portal, wall)] == ["delivered"] * 4)

    publisher.goto(portal.url + routes.PUBLISHER_DELIVERIES)
    rows = publisher.get_by_role("row").filter(has_text="stalled-")
    expect(rows).to_have_count(4)
    expect(rows.filter(has_text="delivered")).to_have_count(4)
    reversal = rows.filter(
        has=publisher.get_by_test_id("delivery-kind").filter(has_text="Reversal")
    )
    expect(reversal).to_have_count(1)
    expect(reversal).to_contain_text("stalled-1")
    taken_back = rows.filter(has_text="stalled-1").filter(has_text="Conversion")
    expect(taken_back.get_by_test_id("delivery-kind")).to_contain_text("reversed")
    expect(publisher.get_by_test_id("failing-banner")).to_have_count(0)
    shots(publisher, "deliveries")


def reverse(portal, wall: Offerwall, uid: str) -> str:
    """Reverse the conversion of the player `uid` (as staff do), its transaction id."""
    engine = portal.engine()
    with write_session(engine) as session:
        txn = session.exec(
            select(Conversion.transaction_id)
            .join(Click, col(Click.id) == col(Conversion.click_id))
            .where(Conversion.offerwall_id == wall.id, Click.uid == uid)
        ).one()
        conversions.reverse(
            session=session,
            transaction_id=txn,
            reason="Chargeback",
            actor=portal.staff[0],
            studio_id=None,
        )
    engine.dispose()
    return txn


def _expiry(text: str) -> datetime:
    found = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d) UTC", text)
    assert found, text
    return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


def test_the_api_key_is_rotated_with_the_grace_the_publisher_picks(portal, new_page):
    publisher, _wall = approved_publisher(portal, new_page, "Grace Wall")
    first = reveal_key(publisher)

    publisher.get_by_role("button", name="Rotate key").click()
    dialog = publisher.get_by_role("alertdialog")
    expect(dialog.get_by_role("button", name="Rotate")).to_be_disabled()  # nothing picked
    dialog.get_by_role("radio", name="1 hour").click()
    dialog.get_by_label("Your password").fill(PUBLISHER_PASSWORD)
    shots(publisher, "rotate-key-dialog")
    dialog.get_by_role("button", name="Rotate").click()
    expect(
        publisher.get_by_text("New API key issued. The previous key works until")
    ).to_be_visible()
    second = publisher.get_by_test_id("api-key").inner_text()
    assert second != first
    assert offers_status(portal.url, first) == 200 and offers_status(portal.url, second) == 200

    # The expiry stays in the workspace, an hour from now.
    publisher.reload()
    until = publisher.get_by_test_id("previous-key-until")
    expect(until).to_contain_text("Your previous key works until")
    expected = datetime.now(UTC) + timedelta(hours=1)
    assert abs(_expiry(until.inner_text()) - expected) < timedelta(minutes=2)
    shots(publisher, "key-grace")

    # A leaked key: none stops the current key, and the one still in grace, at once.
    rotate(publisher, "Rotate key", "None")
    expect(
        publisher.get_by_text("New API key issued. The old key no longer works.")
    ).to_be_visible()
    third = publisher.get_by_test_id("api-key").inner_text()
    assert [offers_status(portal.url, key) for key in (first, second, third)] == [401, 401, 200]
    expect(publisher.get_by_test_id("previous-key-until")).to_have_count(0)


# What each rotation shows: its page, button, the shown value's test id and start, and
# what the page shows once the value was shown.
# what: (page, button, the value's test id, its prefix, the width the rotation is made at;
# each dialog is then looked at in both widths)
_ROTATIONS = {
    "key": (routes.PUBLISHER, "Rotate key", "api-key", "qw_ak_", DESKTOP),
    "secret": (routes.PUBLISHER_POSTBACK, "Rotate secret", "signing-secret", "qw_ps_", PHONE),
}


@pytest.mark.parametrize("what", list(_ROTATIONS))
def test_a_rotation_asks_for_the_password_and_shows_the_new_value_once(portal, new_page, what):
    path, button, shown, prefix, (width, height) = _ROTATIONS[what]
    company = f"Asking {what.title()}"
    publisher, wall = approved_publisher(portal, new_page, company)
    publisher.set_viewport_size({"width": width, "height": height})
    publisher.goto(portal.url + path)
    expect(publisher.get_by_role("button", name=button)).to_be_visible()

    # A wrong password: the dialog stays open saying so, and nothing new is shown; it fits
    # a laptop's and a phone's width.
    rotate(publisher, button, "1 hour", password="not my password")
    dialog = publisher.get_by_role("alertdialog")
    expect(dialog.get_by_role("alert")).to_have_text("Wrong password.")
    expect(dialog.get_by_role("radio", name="1 hour")).to_be_checked()  # kept for a retry
    expect(publisher.get_by_test_id(shown)).to_have_count(0)
    shots(publisher, f"rotate-{what}-refused")  # back at `width` after
    after = wall_named(portal, company)
    assert (after.api_key_digest, after.api_key_previous_digest) == (wall.api_key_digest, None)
    assert (after.signing_secret_sealed, after.signing_secret_shown_at) == (
        wall.signing_secret_sealed,
        None,
    )

    # The right one: the dialog closes and the new value is shown, once.
    dialog.get_by_label("Your password").fill(PUBLISHER_PASSWORD)
    dialog.get_by_role("button", name="Rotate").click()
    expect(dialog).to_have_count(0)
    value = publisher.get_by_test_id(shown).inner_text()
    assert value.startswith(prefix)
    shots(publisher, f"rotate-{what}-shown")
    publisher.reload()
    expect(publisher.get_by_role("button", name=button)).to_be_visible()
    expect(publisher.get_by_test_id(shown)).to_have_count(0)
    if what == "key":
        assert offers_status(portal.url, value) == 200


def _signature_checks(receiver: Receiver, index: int, *secrets: str) -> list[bool]:
    """Whether the index-th request's Questwall-Signature verifies with each secret."""
    url = receiver.url + receiver.requests[index]
    return [verify(receiver.signatures[index], url, secret) for secret in secrets]


def test_the_signing_secret_is_shown_once_then_only_rotated(portal, new_page):
    publisher, _wall = approved_publisher(portal, new_page, "Signed Wall")
    publisher.goto(portal.url + routes.PUBLISHER_POSTBACK)
    expect(publisher.get_by_text("How to check it")).to_be_visible()
    publisher.get_by_label("Your password").fill("not my password")
    publisher.get_by_role("button", name="Show signing secret").click()
    expect(publisher.get_by_text("Wrong password.")).to_be_visible()
    expect(publisher.get_by_test_id("signing-secret")).to_have_count(0)
    publisher.get_by_label("Your password").fill(PUBLISHER_PASSWORD)
    publisher.get_by_role("button", name="Show signing secret").click()
    secret = publisher.get_by_test_id("signing-secret").inner_text()
    assert secret.startswith("qw_ps_")
    shots(publisher, "signing-secret-shown")

    with running_receiver() as receiver:
        save_postback_url(publisher, template(receiver))
        send_test_postback(publisher, receiver)
        assert _signature_checks(receiver, 0, secret) == [True]

        # Once: after a reload only the date it was shown, and the rotation.
        publisher.reload()
        expect(publisher.get_by_test_id("secret-shown-at")).to_contain_text("Shown on ")
        expect(publisher.get_by_role("button", name="Show signing secret")).to_have_count(0)
        expect(publisher.get_by_test_id("signing-secret")).to_have_count(0)
        publisher.get_by_text("How to check it").click()
        expect(publisher.get_by_text("Refuse it when t is more than 5 minutes")).to_be_visible()
        shots(publisher, "signing-secret-once")

        rotate(publisher, "Rotate secret", "1 hour")
        expect(publisher.get_by_text("The previous one also signs until")).to_be_visible()
        rotated = publisher.get_by_test_id("signing-secret").inner_text()
        assert rotated.startswith("qw_ps_") and rotated != secret
        expect(publisher.get_by_test_id("previous-secret-until")).to_contain_text(
            "The previous secret also signs until"
        )
        shots(publisher, "signing-secret-rotated")
        # During the overlap both signatures are sent: either secret verifies.
        send_test_postback(publisher, receiver)
        assert _signature_checks(receiver, 1, rotated, secret) == [True, True]
        assert receiver.signatures[1].count("v1=") == 2

        rotate(publisher, "Rotate secret", "None")
        expect(publisher.get_by_text("The previous one no longer signs.")).to_be_visible()
        expect(publisher.get_by_test_id("previous-secret-until")).to_have_count(0)
        latest = publisher.get_by_test_id("signing-secret").inner_text()
        assert latest != rotated
        send_test_postback(publisher, receiver)
        assert _signature_checks(receiver, 2, latest, rotated, secret) == [True, False, False]


def test_another_publishers_endpoint_cannot_be_resumed_rotated_or_revealed_by_hand(
    portal, new_page
):
    from portal.postbacks.state import PostbackState
    from portal.state.workspace import OfferwallScoped, WorkspaceState

    mine, _ = approved_publisher(portal, new_page, "Prying Wall")
    _, target = approved_publisher(portal, new_page, "Target Wall")
    pause(portal, target)
    before = wall_named(portal, "Target Wall")
    mine.add_init_script(SPY)
    mine.goto(portal.url + routes.PUBLISHER_POSTBACK)
    expect(mine.get_by_role("heading", name="Prying Wall")).to_be_visible()  # loaded
    theirs = f"{routes.PUBLISHER_POSTBACK}?offerwall={target.id}"
    forged = [
        (handler_name(OfferwallScoped, "resume_deliveries"), {}, theirs),
        (
            handler_name(PostbackState, "rotate_secret"),
            form(password=PUBLISHER_PASSWORD, grace="24h"),
            theirs,
        ),
        (handler_name(PostbackState, "reveal_secret"), form(password=PUBLISHER_PASSWORD), theirs),
        (
            handler_name(PostbackState, "save"),
            form(
                postback_url="https://attacker.example/pb",
                reversal_url="https://attacker.example/r",
            ),
            theirs,
        ),
        (
            handler_name(WorkspaceState, "rotate_key"),
            form(password=PUBLISHER_PASSWORD, grace="24h"),
            f"{routes.PUBLISHER}?offerwall={target.id}",
        ),
    ]
    for name, payload, path in forged:
        send_event(mine, name, payload, path)
    expect_refusals(mine, len(forged))
    expect(mine.get_by_test_id("signing-secret")).to_have_count(0)
    after = wall_named(portal, "Target Wall")
    assert after.deliveries_paused_at == before.deliveries_paused_at is not None
    assert (after.signing_secret_sealed, after.signing_secret_shown_at) == (
        before.signing_secret_sealed,
        None,
    )
    assert (after.api_key_digest, after.api_key_previous_digest) == (before.api_key_digest, None)
    assert (after.postback_url, after.reversal_url) == (None, None)


def test_the_reversal_url_is_saved_beside_the_postback_url(portal, new_page):
    publisher, _wall = approved_publisher(portal, new_page, "Reversing Wall")
    publisher.goto(portal.url + routes.PUBLISHER_POSTBACK)
    publisher.get_by_label("URL", exact=True).fill("https://pub.example/pb?tx={transaction_id}")
    publisher.get_by_label("Reversal URL").fill("ftp://pub.example/reversed")
    publisher.get_by_role("button", name="Save").click()
    expect(publisher.get_by_text("The reversal URL must be an http(s) URL")).to_be_visible()
    publisher.get_by_label("Reversal URL").fill("https://pub.example/rev?tx={transaction_id}")
    publisher.get_by_role("button", name="Save").click()
    expect(publisher.get_by_text("Postback URL saved.")).to_be_visible()
    publisher.reload()
    expect(publisher.get_by_label("Reversal URL")).to_have_value(
        "https://pub.example/rev?tx={transaction_id}"
    )
    wall = wall_named(portal, "Reversing Wall")
    assert wall.reversal_url == "https://pub.example/rev?tx={transaction_id}"
    shots(publisher, "postback-page")
