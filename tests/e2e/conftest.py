"""The real portal: the production build served by `questwall serve`, driven in Chromium."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.live import ROOT, cli, free_port, wait_until_up, worker_index
from tests.smtp import MailCatcher, smtp_server

# Debian's chromium-headless-shell: Chromium's own headless build (the same Blink and V8
# as the desktop browser, without its window and UI layers), which Playwright itself runs
# for headless tests. It spends 43% less CPU than /usr/bin/chromium on the same tests;
# CHROMIUM_PATH=/usr/bin/chromium runs them in the desktop browser.
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium-headless-shell")
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


STAFF_EMAIL = "staff@questwall.example"
STAFF_PASSWORD = "quartz-lantern-2026"


class Portal:
    def __init__(self, url: str, env: dict[str, str], game: dict[str, str], pid: int = 0):
        self.url = url
        self.pid = pid  # of `questwall serve`, the leader of its process group
        self.env = env
        self.game = game
        self.staff = (STAFF_EMAIL, STAFF_PASSWORD)

    def engine(self):
        """A read-only look at the server's database, for asserting what it stored."""
        from api.core.db import build_engine

        return build_engine(self.env["DATABASE_URL"])

    @contextmanager
    def setting_up(self) -> Iterator[tuple[Any, Any]]:
        """(session, secret box) for arranging a test's rows in the server's database, one
        transaction, with the server's master key: what a `questwall` command would do,
        without the second a process of its own costs. The command line itself is tested
        by tests/unit/core/test_cli.py; a step a browser test is about goes through the
        browser."""
        from api.core.crypto import SecretBox
        from api.core.db import write_session

        engine = self.engine()
        try:
            with write_session(engine) as session:
                yield session, SecretBox([self.env["SECRET_KEY"]])
        finally:
            engine.dispose()


def arrange_game_and_staff(portal: Portal) -> dict[str, str]:
    """The game every browser test may use and the staff account; the game's credential."""
    from api.accounts import create_user
    from api.studios import create_game
    from models import Role

    with portal.setting_up() as (session, box):
        issued = create_game(session=session, box=box, name="E2E")
        create_user(session=session, email=STAFF_EMAIL, password=STAFF_PASSWORD, role=Role.STAFF)
        return {
            "gameId": issued.game_id,
            "clientId": issued.client_id,
            "clientSecret": issued.client_secret,
        }


@pytest.fixture(scope="session")
def mailbox() -> Iterator[MailCatcher]:
    """A real SMTP server (aiosmtpd) that receives the portal's mail."""
    with smtp_server() as server:
        yield server


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests are not traced for coverage: the code they exercise runs in the served
    portal, a process of its own, and tracing Playwright's client in the test's process
    costs CPU the browser and the server need."""
    for item in items:
        if item.get_closest_marker("e2e"):
            item.add_marker(pytest.mark.no_cover)


@pytest.fixture(scope="session")
def portal(tmp_path_factory: pytest.TempPathFactory, mailbox: MailCatcher) -> Iterator[Portal]:
    """One portal per test worker, shared by its browser tests (each signs in as users of
    its own)."""
    with served_portal(tmp_path_factory.mktemp("portal"), SMTP_URL=mailbox.url) as served:
        yield served


def web_dir(name: str) -> Path:
    """The portal's build directory for one served portal of this test worker.

    A build holds its server's port, so two portals served at once need two directories;
    the tests never touch the developer's `.web/`. A directory is kept between runs: its
    frontend packages are installed once, and a rebuild only recompiles the pages."""
    return ROOT / ".web-tests" / f"gw{worker_index()}-{name}"


@contextmanager
def served_portal(
    tmp: Path, *serve_args: str, build: str = "shared", **extra_env: str
) -> Iterator[Portal]:
    """`questwall serve` (with `serve_args`) on a database of its own, a game and a staff
    account in it, until the block ends; `build` names its build directory (`web_dir`)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Without the project's Node.js and bun on PATH (as `make` puts them): `questwall
    # serve` must find them itself, as when a user runs it directly.
    tools = str(ROOT / ".tools" / "node_modules" / ".bin")
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p != tools]
    inherited = {k: v for k, v in os.environ.items() if k != "REFLEX_USE_SYSTEM_BUN"}
    env = {
        **inherited,
        "DATABASE_URL": f"sqlite:///{tmp / 'portal.db'}",
        "QUESTWALL_DATA_DIR": str(tmp / "data"),
        "SECRET_KEY": "e2e-master-key",
        "BASE_URL": url,
        "POSTBACK_ALLOW_PRIVATE": "true",  # the tests' receiver listens on 127.0.0.1
        # Every test's players click from 127.0.0.1, as many players behind one NAT do.
        "QUESTWALL_CLICKS_PER_IP": "1000",
        "QUESTWALL_PLAYERS_PER_IP": "0",
        # ... and take the same offers through several offerwalls.
        "QUESTWALL_FRAUD_DEFAULTS": "multi_offerwall=allow",
        # The tests' browser is headless Chromium, whose User-Agent says so.
        "QUESTWALL_REFUSE_SCRIPTED_AGENTS": "false",
        "REFLEX_TELEMETRY_ENABLED": "false",
        "REFLEX_WEB_WORKDIR": str(web_dir(build)),
        # Reflex empties its state directory as it starts: two portals starting at once
        # in one directory would each delete the other's files (a crash at start).
        "REFLEX_STATES_WORKDIR": str(tmp / "states"),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), *path]),
        **extra_env,
    }
    cli(env, "migrate")  # as a user would: it also records the master key
    # The game and the staff account, arranged in-process (the commands that make them are
    # tests/unit/core/test_cli.py's): two processes fewer per portal, and the staff's
    # password hashed at the tests' cost, which every staff sign-in then verifies.
    game = arrange_game_and_staff(Portal(url, env, {}))
    log = (tmp / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "api.cli", "serve"),
            *("--host", "127.0.0.1", "--port", str(port), *serve_args),
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # The first build installs the frontend packages: allow it time.
        wait_until_up(url + "/", proc, timeout=600, log=tmp / "serve.log")
        yield Portal(url, env, game, proc.pid)
    finally:
        # SIGTERM to `questwall serve` alone, as a container runtime sends it: it passes it
        # on to Reflex, whose server stops its workers and exits in about a second. The
        # same signal sent to the whole group at once reaches Granian's workers before their
        # supervisor, which then saw them exit "unexpectedly" and, now and then, hung for
        # the full 30 s below (1 stop in 4 after a browser had connected).
        with contextlib.suppress(ProcessLookupError):  # it may have exited on its own
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # whatever is left of the group
            os.killpg(proc.pid, signal.SIGKILL)


# How long an `expect` keeps polling before it fails. Polling returns as soon as the page
# shows what is expected, so a generous limit costs nothing on a quiet machine and keeps a
# loaded one (parallel test workers, each with a portal and a browser) from failing a test
# that only waited 5 s, Playwright's default.
EXPECT_TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    assert Path(CHROMIUM).exists(), f"Chromium not found at {CHROMIUM}: run `make test`"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def new_page(browser):
    """Pages in separate browser contexts (separate cookies: separate sign-ins)."""
    contexts = []

    def make(width: int = 1280, height: int = 800):
        context = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


LAPTOP, PHONE = (1366, 768), (390, 844)


def widths_too_wide(page, name: str, sizes=(LAPTOP, PHONE)) -> list[int]:
    """Look at the open page at each size: a screenshot each (`<name>-<width>.png`), and
    the widths at which it scrolls sideways. The portal's layout follows the width in CSS
    alone, so a resized page shows what one opened at that width shows; the page is left
    at the size it had."""
    before = page.viewport_size
    too_wide = []
    for width, height in sizes:
        page.set_viewport_size({"width": width, "height": height})
        screenshot(page, f"{name}-{width}")
        if page.evaluate("document.documentElement.scrollWidth") > width:
            too_wide.append(width)
    if before:
        page.set_viewport_size(before)
    return too_wide


def looked_at(page, name: str, sizes=(LAPTOP, PHONE)) -> None:
    """`widths_too_wide`, none allowed."""
    assert widths_too_wide(page, name, sizes) == [], f"{name} scrolls sideways"


# Screenshots for a person to look at (`make screenshots` takes them): a full-page PNG
# costs Chromium 0.3-2 s, nearly half of what the page walk spent, and nobody looks at
# them in a routine run. Every browser test calls `screenshot` where it would take one,
# so the same run with QUESTWALL_SCREENSHOTS=1 shows each of its steps.
SCREENSHOTS = os.environ.get("QUESTWALL_SCREENSHOTS") == "1"


def screenshot(target, name: str, *, full_page: bool = True) -> Path | None:
    """`target` (a page, whole unless `full_page` is false, or a locator) as
    test-artifacts/screenshots/<name>.png, when screenshots are asked for."""
    if not SCREENSHOTS:
        return None
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if hasattr(target, "set_viewport_size"):  # a page
        target.screenshot(path=str(path), full_page=full_page)
    else:
        target.scroll_into_view_if_needed()
        target.screenshot(path=str(path))
    return path
