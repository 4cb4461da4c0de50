"""Sign-in throttling: the per-address limit holds under parallel attempts, the per-IP
limit (in memory and in Redis), and an owner's known IP is not locked out."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlmodel import select

from api.accounts import AccountError, IpThrottle, LoginThrottled, throttle
from api.accounts import sessions as accounts
from api.core.db import write_session
from models import SignInOrigin
from tests.databases import also_pgbouncer
from tests.factories import PASSWORD, make_user

OWNER_IP = "198.51.100.7"


def attempt(engine, box, ips: IpThrottle, email: str, password: str, ip: str) -> str:
    """One sign-in; what the user is told: 'ok', 'wrong' or 'throttled'."""
    try:
        accounts.sign_in(
            engine=engine, box=box, email=email, password=password, client_ip=ip, ip_throttle=ips
        )
    except LoginThrottled:
        return "throttled"
    except AccountError:
        return "wrong"
    return "ok"


@pytest.fixture(params=["memory", "redis"])
def ip_throttle(request: pytest.FixtureRequest) -> IpThrottle:
    if request.param == "memory":
        return IpThrottle()
    url = request.getfixturevalue("redis_url")
    return IpThrottle(url, key_prefix=request.getfixturevalue("redis_prefix"))


@also_pgbouncer
def test_twenty_parallel_wrong_passwords_get_exactly_five_password_checks(engine, box):
    email = make_user(engine)
    ips = IpThrottle()
    start = threading.Barrier(20)

    def one(n: int) -> str:
        start.wait()  # all twenty reach sign-in together, each on its own connection
        return attempt(engine, box, ips, email, f"wrong password {n}", f"203.0.113.{n}")

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(one, range(20)))
    # "Wrong email or password" is only ever said after a password check.
    assert answers.count("wrong") == throttle.MAX_FAILURES
    assert answers.count("throttled") == 20 - throttle.MAX_FAILURES


def test_the_ip_limit_stops_one_client_guessing_across_many_addresses(ip_throttle):
    attacker = "203.0.113.66"
    for _ in range(throttle.IP_LIMIT.amount):
        assert ip_throttle.retry_after(attacker) is None
        ip_throttle.failed(attacker)
    wait = ip_throttle.retry_after(attacker)
    assert wait is not None and 0 < wait <= 15 * 60
    assert ip_throttle.retry_after("203.0.113.67") is None  # another client is untouched


def test_the_ip_limit_is_shared_by_processes_through_redis(redis_url, redis_prefix):
    first, second = (IpThrottle(redis_url, key_prefix=redis_prefix) for _ in range(2))
    for _ in range(throttle.IP_LIMIT.amount):
        first.failed("203.0.113.66")
    assert second.retry_after("203.0.113.66") is not None


def test_an_unreachable_redis_leaves_sign_in_working_and_says_so(caplog):
    ips = IpThrottle("redis://127.0.0.1:1/0")  # nothing listens on port 1
    ips.failed("203.0.113.66")
    assert ips.retry_after("203.0.113.66") is None
    assert "sign-in IP limit unavailable" in caplog.text
    assert "127.0.0.1:1" not in caplog.text  # the URL (it may hold a password) is not logged


def test_a_throttled_ip_is_refused_before_the_password_is_checked(engine, box, ip_throttle):
    email = make_user(engine)
    attacker = "203.0.113.66"
    victims = [make_user(engine, f"victim{n}@example.com") for n in range(5)]
    for n in range(throttle.IP_LIMIT.amount):
        # Four per address: under the address limit, so only the IP's count stops it.
        assert (
            attempt(engine, box, ip_throttle, victims[n % 5], "guess 123456", attacker) == "wrong"
        )
    assert attempt(engine, box, ip_throttle, email, PASSWORD, attacker) == "throttled"
    assert attempt(engine, box, ip_throttle, email, PASSWORD, "203.0.113.67") == "ok"


def test_the_owner_signs_in_from_a_known_ip_while_the_address_is_paused(engine, box):
    email = make_user(engine)
    ips = IpThrottle()
    assert attempt(engine, box, ips, email, PASSWORD, OWNER_IP) == "ok"
    for n in range(throttle.MAX_FAILURES + 3):  # guessers on many IPs pause the address
        attempt(engine, box, ips, email, "guess 123456", f"203.0.113.{n}")
    assert attempt(engine, box, ips, email, PASSWORD, "203.0.113.200") == "throttled"
    assert attempt(engine, box, ips, email, PASSWORD, OWNER_IP) == "ok"
    # The owner's success cleared the counter, and the origin is stored only as a digest.
    with write_session(engine) as session:
        origin = session.exec(select(SignInOrigin)).one()
    assert OWNER_IP not in origin.origin_digest and email not in origin.email_digest
    assert attempt(engine, box, ips, email, PASSWORD, "203.0.113.200") == "ok"


def test_a_known_ip_of_one_address_is_not_known_for_another(engine, box):
    owner, other = make_user(engine), make_user(engine, "other@example.com")
    ips = IpThrottle()
    assert attempt(engine, box, ips, owner, PASSWORD, OWNER_IP) == "ok"
    for n in range(throttle.MAX_FAILURES):
        attempt(engine, box, ips, other, "guess 123456", f"203.0.113.{n}")
    assert attempt(engine, box, ips, other, PASSWORD, OWNER_IP) == "throttled"
