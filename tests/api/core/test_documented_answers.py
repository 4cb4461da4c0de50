"""Every route's OpenAPI entry documents exactly the answers the route gives: below, one
real request per documented status of each route of /v2/openapi.json. A route documents
the statuses of its table and no other, and each request gets its status.

A new route, or a new status in a route's `responses`, fails here until its request is
added to ANSWERS; a documented status no request can get is one to take out of the docs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from api.accounts import SESSION_COOKIE, IpThrottle, sign_in
from api.app import create_api
from api.core.config import Settings
from api.core.db import build_engine, new_session, write_session
from api.missions import offers
from api.publishers import offerwalls
from models import Offerwall, Role, User
from tests.api.conftest import PROXY
from tests.api.tracking_helpers import click
from tests.factories import (
    PASSWORD,
    FixedCountries,
    SignedClient,
    iso_now,
    make_mission,
    make_offerwall,
    make_quest,
    make_user,
    mission_data,
)

EVENTS, LOOKUP = "/v2/custom-events", "/v2/platform-users/lookup"
EVENT = {"userId": "p1", "event": "GAME_OVER", "time": iso_now()}
TOO_LARGE = b" " * (1024 * 1024 + 1)  # over the 1 MiB limit of signed bodies
IOS_ONLY = {"operatingSystem": ["iOS"]}  # refused to the tests' Android browser


@dataclass
class World:
    """What the requests need: the API, a game, an approved offerwall, a suspended one,
    offers, and the API with the smallest rate limits and with no database."""

    client: TestClient
    signed: SignedClient
    engine: object
    settings: Settings
    box: object
    owid: str
    key: str
    suspended_key: str
    mission: str
    ios_mission: str
    inactive_mission: str
    quest: str
    ios_quest: str
    inactive_quest: str
    tmp_path: object

    def app(self, **update: object) -> TestClient:
        app = create_api(
            engine=update.pop("engine", self.engine),
            settings=self.settings.model_copy(update=update),
            box=self.box,
            countries=FixedCountries(),
        )
        return TestClient(app, client=(PROXY, 50000), follow_redirects=False)

    @cached_property
    def tight(self) -> TestClient:
        """The API allowing one signed request per client id and one report at a time."""
        return self.app(
            ingest_rate_per_second=0.01,
            ingest_burst=1,
            reports_rate_per_minute=0.01,
            reports_burst=1,
        )

    @cached_property
    def broken(self) -> TestClient:
        """The API on an SQLite database it cannot open (a folder where the file should be)."""
        folder = self.tmp_path / "not-a-file.db"  # type: ignore[operator]
        folder.mkdir()
        return self.app(engine=build_engine(f"sqlite:///{folder}"))

    def twice(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        """The second of two requests (over a limit of one)."""
        send()
        return send()

    def wall(self, client: TestClient | None = None, **params: str) -> httpx.Response:
        return (client or self.client).get(
            "/wall", params={"owid": self.owid, "uid": "alice", **params}
        )

    def support(self, client: TestClient | None = None, **params: str) -> httpx.Response:
        return (client or self.client).get(
            "/wall/support", params={"owid": self.owid, "uid": "alice", **params}
        )

    def report(self, client: TestClient | None = None, **form: str) -> httpx.Response:
        data = {"owid": self.owid, "uid": "alice", "offer": self.mission, "message": "Nothing"}
        return (client or self.client).post("/wall/support", data={**data, **form})

    def offers(self, client: TestClient | None = None, key: str | None = None, **params: str):
        headers = {"x-api-key": key or self.key} if key != "" else {}
        return (client or self.client).get("/offerwall/offers", params=params, headers=headers)

    def progress(self, client: TestClient | None = None, key: str | None = None, uid="alice"):
        headers = {"x-api-key": key or self.key} if key != "" else {}
        return (client or self.client).get(f"/offerwall/users/{uid}/progress", headers=headers)

    def reports(self, client: TestClient | None = None, key: str | None = None, **params: str):
        headers = {"x-api-key": key or self.key} if key != "" else {}
        return (client or self.client).get("/offerwall/reports", params=params, headers=headers)

    def margin(
        self, client: TestClient | None = None, role: Role | None = Role.STAFF, **params: str
    ) -> httpx.Response:
        """The staff's margin report, with the portal session of an account of `role`."""
        return self.staff("/staff/reports/margin", client, role, **params)

    def staff(
        self,
        path: str,
        client: TestClient | None = None,
        role: Role | None = Role.STAFF,
        **params: str,
    ) -> httpx.Response:
        """A staff route, with the portal session of an account of `role`."""
        headers = {}
        if role is not None:
            email = f"{role.value}-answers@example.com"
            with new_session(self.engine) as session:  # type: ignore[arg-type]
                known = session.execute(sa.select(User.id).where(User.email == email)).first()
            if known is None:
                fields = {} if role == Role.STAFF else {"offerwall_id": self._offerwall_id()}
                make_user(self.engine, email, role=role, **fields)  # type: ignore[arg-type]
            token = sign_in(
                engine=self.engine,
                box=self.box,
                email=email,
                password=PASSWORD,
                client_ip="203.0.113.5",
                ip_throttle=IpThrottle(),
            ).token
            headers["cookie"] = f"{SESSION_COOKIE}={token}"
        return (client or self.client).get(path, params=params, headers=headers)

    def _offerwall_id(self) -> str:
        with new_session(self.engine) as session:  # type: ignore[arg-type]
            return session.execute(
                sa.select(Offerwall.id).where(Offerwall.owid == self.owid)
            ).scalar_one()

    def link(self, kind: str, offer: str, client: TestClient | None = None, **params: str):
        return click(client or self.client, kind, offer, self.owid, **params)


Ask = Callable[[World], httpx.Response]


def signed_by(client: TestClient, world: World) -> SignedClient:
    return SignedClient(client, world.signed.credential)


def reused_key(w: World) -> httpx.Response:
    """An Idempotency-Key sent again with another body."""
    key = {"extra_headers": {"Idempotency-Key": "key-1"}}
    w.signed.events(EVENT, **key)
    return w.signed.events({**EVENT, "value": 2}, **key)


def sent_report(w: World) -> httpx.Response:
    """A report on an offer the player opened."""
    assert w.link("mission", w.mission, uid="alice").status_code == 302
    return w.report()


def tracking(kind: str, offer: Callable[[World], str], ios: Callable[[World], str], inactive):
    return {
        302: lambda w: w.link(kind, offer(w), uid="alice"),
        400: lambda w: w.link(kind, offer(w)),
        403: lambda w: w.link(kind, ios(w), uid="alice"),
        404: lambda w: w.link(kind, "no-such-offer", uid="alice"),
        410: lambda w: w.link(kind, inactive(w), uid="alice"),
        503: lambda w: w.link(kind, offer(w), w.broken, uid="alice"),
    }


def wall_page(page: str) -> dict[int, Ask]:
    def get(w: World, client: TestClient | None = None, **params: str) -> httpx.Response:
        return w.wall(client, **params) if page == "wall" else w.support(client, **params)

    return {
        200: lambda w: get(w),
        400: lambda w: get(w, uid=""),
        403: lambda w: get(w, sig="0" * 64),
        404: lambda w: get(w, owid="no-such-wall"),
        503: lambda w: get(w, w.broken),
    }


# (method, path template) → status → a request that gets it.
ANSWERS: dict[tuple[str, str], dict[int, Ask]] = {
    ("post", EVENTS): {
        200: lambda w: w.signed.events(EVENT),
        207: lambda w: w.signed.events(EVENT, {"userId": "p1"}),
        400: lambda w: w.signed.post_raw(EVENTS, b"{not json"),
        401: lambda w: w.client.post(EVENTS, json={"gameId": "g", "events": []}),
        403: lambda w: w.signed.send({"gameId": "another-game", "events": []}),
        409: reused_key,
        413: lambda w: w.signed.post_raw(EVENTS, TOO_LARGE),
        422: lambda w: w.signed.events({"userId": "p1"}),
        429: lambda w: w.twice(lambda: signed_by(w.tight, w).events(EVENT)),
        503: lambda w: signed_by(w.broken, w).events(EVENT),
    },
    ("post", LOOKUP): {
        200: lambda w: w.signed.send(
            {"gameId": w.signed.credential.game_id, "userIds": ["p1"]}, path=LOOKUP
        ),
        400: lambda w: w.signed.post_raw(LOOKUP, b"{not json"),
        401: lambda w: w.client.post(LOOKUP, json={"gameId": "g", "userIds": ["p1"]}),
        403: lambda w: w.signed.send({"gameId": "another-game", "userIds": ["p1"]}, path=LOOKUP),
        413: lambda w: w.signed.post_raw(LOOKUP, TOO_LARGE),
        422: lambda w: w.signed.send(
            {"gameId": w.signed.credential.game_id, "userIds": []}, path=LOOKUP
        ),
        429: lambda w: w.twice(
            lambda: signed_by(w.tight, w).send(
                {"gameId": w.signed.credential.game_id, "userIds": ["p1"]}, path=LOOKUP
            )
        ),
        503: lambda w: signed_by(w.broken, w).send(
            {"gameId": w.signed.credential.game_id, "userIds": ["p1"]}, path=LOOKUP
        ),
    },
    ("get", "/missions/{mission_id}"): tracking(
        "mission", lambda w: w.mission, lambda w: w.ios_mission, lambda w: w.inactive_mission
    ),
    ("get", "/quests/{quest_id}"): tracking(
        "quest", lambda w: w.quest, lambda w: w.ios_quest, lambda w: w.inactive_quest
    ),
    ("get", "/offerwall/offers"): {
        200: lambda w: w.offers(),
        400: lambda w: w.offers(limit="-1"),
        401: lambda w: w.offers(key=""),
        403: lambda w: w.offers(key=w.suspended_key),
        503: lambda w: w.offers(w.broken),
    },
    ("get", "/offerwall/users/{uid}/progress"): {
        200: lambda w: w.progress(),
        400: lambda w: w.progress(uid="u" * 300),
        401: lambda w: w.progress(key=""),
        403: lambda w: w.progress(key=w.suspended_key),
        503: lambda w: w.progress(w.broken),
    },
    ("get", "/offerwall/reports"): {
        200: lambda w: w.reports(),
        400: lambda w: w.reports(groupBy="planet"),
        401: lambda w: w.reports(key=""),
        403: lambda w: w.reports(key=w.suspended_key),
        429: lambda w: w.twice(lambda: w.reports(w.tight)),
        503: lambda w: w.reports(w.broken),
    },
    ("get", "/staff/reports/margin"): {
        200: lambda w: w.margin(),
        400: lambda w: w.margin(by="planet"),
        401: lambda w: w.margin(role=None),
        403: lambda w: w.margin(role=Role.PUBLISHER),
        503: lambda w: w.margin(w.broken),
    },
    ("get", "/staff/audit"): {
        200: lambda w: w.staff("/staff/audit"),
        400: lambda w: w.staff("/staff/audit", since="never"),
        401: lambda w: w.staff("/staff/audit", role=None),
        403: lambda w: w.staff("/staff/audit", role=Role.PUBLISHER),
        503: lambda w: w.staff("/staff/audit", w.broken),
    },
    ("get", "/staff/audit/export"): {
        200: lambda w: w.staff("/staff/audit/export", format="csv"),
        400: lambda w: w.staff("/staff/audit/export", format="xlsx"),
        401: lambda w: w.staff("/staff/audit/export", role=None),
        403: lambda w: w.staff("/staff/audit/export", role=Role.PUBLISHER),
        503: lambda w: w.staff("/staff/audit/export", w.broken),
    },
    ("get", "/wall"): wall_page("wall"),
    ("get", "/wall/support"): wall_page("support"),
    ("post", "/wall/support"): {
        303: lambda w: sent_report(w),
        400: lambda w: w.report(offer=""),
        403: lambda w: w.report(sig="0" * 64),
        404: lambda w: w.report(owid="no-such-wall"),
        413: lambda w: w.client.post("/wall/support", content=b"message=" + b"x" * 40_000),
        503: lambda w: w.report(w.broken),
    },
}


def documented(client: TestClient) -> dict[tuple[str, str], set[int]]:
    paths = client.get("/v2/openapi.json").json()["paths"]
    return {
        (method, path): {int(status) for status in operation["responses"]}
        for path, operations in paths.items()
        for method, operation in operations.items()
    }


def test_every_route_documents_the_statuses_of_its_requests_here(client):
    docs = documented(client)
    assert set(docs) == set(ANSWERS), "add the new route's requests to ANSWERS"
    assert docs == {route: set(answers) for route, answers in ANSWERS.items()}


def _inactive(engine, kind: str, offer_id: str) -> str:
    with write_session(engine) as session:
        offers.set_active(session=session, kind=kind, offer_id=offer_id, active=False)
    return offer_id


@pytest.fixture
def world(client, signed, game, engine, api_settings, box, wall, tmp_path) -> World:
    owall, key = wall
    _suspended, suspended_key = make_offerwall(engine, box, name="Suspended")
    with write_session(engine) as session:
        offerwalls.suspend(
            session=session, offerwall=offerwalls.get_offerwall(session=session, ref=_suspended.id)
        )

    def quest(**extra: object) -> str:
        return make_quest(engine, game.game_id, [mission_data()], **extra).id

    return World(
        client=client,
        signed=signed,
        engine=engine,
        settings=api_settings,
        box=box,
        owid=owall.owid or "",
        key=key,
        suspended_key=suspended_key,
        mission=make_mission(engine, game.game_id).id,
        ios_mission=make_mission(engine, game.game_id, **IOS_ONLY).id,
        inactive_mission=_inactive(engine, "mission", make_mission(engine, game.game_id).id),
        quest=quest(),
        ios_quest=quest(**IOS_ONLY),
        inactive_quest=_inactive(engine, "quest", quest()),
        tmp_path=tmp_path,
    )


@pytest.mark.parametrize("route", list(ANSWERS), ids=lambda route: " ".join(route))
def test_each_documented_status_is_what_its_request_gets(world, route):
    got = {status: ask(world).status_code for status, ask in ANSWERS[route].items()}
    assert got == {status: status for status in ANSWERS[route]}
