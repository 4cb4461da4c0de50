"""With REDIS_URL, the limits of one served app (the signed requests' rate and the sign-in
IP limit) write their counts under REDIS_KEY_PREFIX, so deployments sharing a Redis do not
share counts."""

from __future__ import annotations

import redis
from fastapi.testclient import TestClient

from api.app import create_api
from portal import routes
from portal.session_routes import add_session_routes
from tests.factories import FixedCountries, SignedClient, iso_now, make_game


def test_both_limits_count_under_the_configured_prefix(
    engine, box, settings, redis_url, redis_prefix
):
    settings = settings.model_copy(
        update={"redis_url": redis_url, "redis_key_prefix": redis_prefix}
    )
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    add_session_routes(app)
    client = TestClient(app, headers={"Origin": settings.base_url})
    credential = make_game(engine, box)

    store = redis.Redis.from_url(redis_url)

    def keys() -> list[str]:
        return [key.decode() for key in store.scan_iter(match=f"{redis_prefix}*")]

    # Each count is read right after its request: the signed requests' counter is per
    # second and expires within two, which a loaded machine can take between two steps.
    event = {"userId": "p1", "event": "GAME_OVER", "time": iso_now()}
    assert SignedClient(client, credential).events(event).status_code == 200
    assert any(credential.client_id in key for key in keys()), keys()
    wrong = {"email": "nobody@example.com", "password": "not-the-password-1"}
    assert client.post(f"{routes.AUTH}/sign-in", json=wrong).status_code == 401
    assert any("sign-in" in key for key in keys()), keys()
    store.close()
