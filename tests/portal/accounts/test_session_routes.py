"""The portal's session endpoints: the HttpOnly cookie, the error shape, the Origin check,
the throttles with the client IP (through trusted proxies), signup and sign-out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from api.accounts import account_for, throttle
from api.accounts import sessions as accounts
from api.app import create_api
from api.core.db import write_session
from models import AuditEvent, Role, User
from portal import routes
from portal.session_routes import SESSION_COOKIE, add_session_routes, session_token
from tests.factories import IPHONE_UA, FixedCountries

PASSWORD = "correct horse battery"
ORIGIN = "http://localhost:8000"
PROXY = "127.0.0.1"


def make_client(engine, box, settings) -> TestClient:
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    add_session_routes(app)
    return TestClient(app, client=(PROXY, 50000), headers={"Origin": ORIGIN})


@pytest.fixture
def client(engine, box, settings) -> TestClient:
    return make_client(engine, box, settings.model_copy(update={"trusted_proxies": PROXY}))


@pytest.fixture
def staff(engine) -> str:
    with write_session(engine) as session:
        accounts.create_user(
            session=session, email="staff@example.com", password=PASSWORD, role=Role.STAFF
        )
    return "staff@example.com"


def sign_in(client, email, password, **extra):
    return client.post(
        f"{routes.AUTH}/sign-in", json={"email": email, "password": password}, **extra
    )


def set_cookie(answer) -> str:
    [header] = [v for k, v in answer.headers.multi_items() if k == "set-cookie"]
    return header


def test_sign_in_sets_an_httponly_samesite_cookie_the_session_resolves(client, staff, engine, box):
    answer = sign_in(client, staff, PASSWORD)
    assert answer.status_code == 200
    assert answer.json() == {"statusCode": 200, "message": "OK", "location": "/staff"}
    cookie = set_cookie(answer)
    assert cookie.startswith(f"{SESSION_COOKIE}=qw_s_")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # BASE_URL is http here
    token = session_token(f"other=1; {cookie.split(';')[0]}")
    assert account_for(engine=engine, token=token).email == staff
    assert token not in answer.text  # never in the body a script could read


def test_the_cookie_is_secure_when_the_portal_is_served_over_https(engine, box, settings, staff):
    https = settings.model_copy(update={"base_url": "https://portal.example"})
    client = make_client(engine, box, https)
    answer = sign_in(client, staff, PASSWORD, headers={"Origin": "https://portal.example"})
    assert "Secure" in set_cookie(answer)


@pytest.mark.parametrize(
    ("next_path", "location"),
    [("/reports?from=x", "/reports?from=x"), ("//evil.example/", "/staff")],
)
def test_sign_in_goes_to_next_only_on_this_site(client, staff, next_path, location):
    answer = client.post(
        f"{routes.AUTH}/sign-in", json={"email": staff, "password": PASSWORD, "next": next_path}
    )
    assert answer.json()["location"] == location


def test_a_wrong_password_gets_the_error_shape_and_no_cookie(client, staff):
    answer = sign_in(client, staff, "wrong password 1")
    assert answer.status_code == 401
    assert answer.json() == {
        "statusCode": 401,
        "error": "Unauthorized",
        "message": "Wrong email or password.",
        "code": "invalid_credentials",
        "details": [],
    }
    assert "set-cookie" not in answer.headers


@pytest.mark.parametrize("origin", ["https://evil.example", None])
def test_another_origin_is_refused(client, staff, origin):
    headers = {"Origin": origin} if origin else {}
    if origin is None:
        client.headers.pop("Origin")
    answer = sign_in(client, staff, PASSWORD, headers=headers)
    assert answer.status_code == 403
    assert answer.json()["code"] == "origin_not_allowed"
    assert "set-cookie" not in answer.headers


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b'{"email": 1, "password": "x"}', 422, "validation_failed"),
        (b'{"email": "a@b.c", "password": "x", "extra": 1}', 422, "validation_failed"),
    ],
)
def test_bad_bodies_get_a_stable_code(client, body, status, code):
    answer = client.post(
        f"{routes.AUTH}/sign-in", content=body, headers={"Content-Type": "application/json"}
    )
    assert (answer.status_code, answer.json()["code"]) == (status, code)


def test_a_paused_address_answers_429_with_retry_after(client, staff):
    for _ in range(throttle.MAX_FAILURES):
        assert sign_in(client, staff, "wrong password 1").status_code == 401
    answer = sign_in(client, staff, PASSWORD)
    assert answer.status_code == 429
    assert answer.json()["code"] == "rate_limited"
    assert 0 < int(answer.headers["retry-after"]) <= 15 * 60


def test_the_ip_limit_counts_the_client_behind_a_trusted_proxy(client, staff, engine):
    guesser = {"X-Forwarded-For": "203.0.113.66"}
    with write_session(engine) as session:
        for n in range(5):
            accounts.create_user(
                session=session, email=f"v{n}@example.com", password=PASSWORD, role=Role.STAFF
            )
    for n in range(throttle.IP_LIMIT.amount):
        assert (
            sign_in(client, f"v{n % 5}@example.com", "guess 12345", headers=guesser).status_code
            == 401
        )
    assert sign_in(client, staff, PASSWORD, headers=guesser).status_code == 429
    other = {"X-Forwarded-For": "203.0.113.67"}
    assert sign_in(client, staff, PASSWORD, headers=other).status_code == 200


def test_signup_names_the_refused_field(client):
    form = {
        "company": "Acme",
        "website": "https://acme.example",
        "contact": "Ada",
        "email": "ada@acme.example",
        "password": PASSWORD,
        "confirm": PASSWORD + "x",
    }
    answer = client.post(f"{routes.AUTH}/sign-up", json=form)
    assert answer.status_code == 422
    assert answer.json()["details"] == [{"path": "confirm", "message": "The two passwords differ."}]
    answer = client.post(
        f"{routes.AUTH}/sign-up", json=form | {"confirm": PASSWORD, "website": "x"}
    )
    assert answer.json()["details"][0]["path"] == "website"


def test_signup_signs_the_new_publisher_in(client, engine, box):
    form = {
        "company": "Acme",
        "website": "https://acme.example",
        "contact": "Ada",
        "email": "ada@acme.example",
        "password": PASSWORD,
        "confirm": PASSWORD,
    }
    answer = client.post(f"{routes.AUTH}/sign-up", json=form)
    assert answer.status_code == 200
    assert answer.json()["location"] == routes.APPLICATION
    token = session_token(set_cookie(answer).split(";")[0])
    assert account_for(engine=engine, token=token).role == Role.PUBLISHER


def test_sign_out_ends_the_session_and_deletes_the_cookie(client, staff, engine, box):
    signed = sign_in(client, staff, PASSWORD)
    token = session_token(set_cookie(signed).split(";")[0])
    answer = client.post(f"{routes.AUTH}/sign-out")
    assert answer.status_code == 200
    assert set_cookie(answer).startswith(f'{SESSION_COOKIE}=""') or "Max-Age=0" in set_cookie(
        answer
    )
    assert account_for(engine=engine, token=token) is None


def test_unknown_auth_paths_answer_json(client):
    answer = client.get(f"{routes.AUTH}/nothing-here")
    assert (answer.status_code, answer.json()["code"]) == (404, "not_found")


@pytest.mark.parametrize("field", ["company", "website", "contact", "password"])
def test_a_nul_byte_in_a_signup_field_is_refused_not_stored(client, engine, field):
    form = {
        "company": "Nul Rewards",
        "website": "https://nul.example",
        "contact": "Ada",
        "email": f"{field}@nul.example",
        "password": PASSWORD,
        "confirm": PASSWORD,
    }
    form[field] += "\x00"
    if field == "password":
        form["confirm"] = form["password"]
    answer = client.post(f"{routes.AUTH}/sign-up", json=form)
    assert answer.status_code == 422
    assert field in {d["path"] for d in answer.json()["details"]}
    with Session(engine) as session:
        assert session.exec(select(User).where(User.email == form["email"])).first() is None


def test_sign_in_and_out_over_http_are_recorded_as_the_account_from_its_browser(
    client, staff, engine
):
    browser = {"X-Forwarded-For": "198.51.100.9", "User-Agent": IPHONE_UA}
    assert sign_in(client, staff, "not the password", headers=browser).status_code == 401
    assert sign_in(client, "nobody@example.com", "whatever", headers=browser).status_code == 401
    answer = sign_in(client, staff, PASSWORD, headers=browser)
    token = session_token(set_cookie(answer).split(";")[0])
    client.cookies.set(SESSION_COOKIE, token)
    assert client.post(f"{routes.AUTH}/sign-out", headers=browser).status_code == 200
    with Session(engine) as session:
        found = session.exec(select(AuditEvent).order_by(AuditEvent.id)).all()
        user = session.exec(select(User).where(User.email == staff)).one()
    assert [e.action for e in found] == [
        "account.created",
        "account.sign_in_failed",
        "account.signed_in",
        "account.signed_out",
    ]
    for event in found[1:]:
        assert (event.actor_id, event.actor_ip, event.user_agent) == (
            user.id,
            "198.51.100.9",
            IPHONE_UA,
        )
        assert (event.target_type, event.target_id, event.target_name) == (
            "account",
            user.id,
            staff,
        )
    assert found[2].changes["country"] == [None, "DE"]
    text = " ".join(str(e.changes) for e in found)
    assert PASSWORD not in text and "not the password" not in text and token not in text


def test_an_account_with_two_factor_sign_in_gets_its_session_after_the_code(
    client, staff, engine, box, clock
):
    import pyotp

    from api.accounts import totp
    from portal.session_routes import CHALLENGE_COOKIE

    moment = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)  # a step's start
    clock.set(moment)
    token = session_token(set_cookie(sign_in(client, staff, PASSWORD)).split(";")[0])
    account = account_for(engine=engine, token=token)
    client.cookies.clear()
    earlier = moment - timedelta(seconds=90)
    with write_session(engine) as session:
        user = session.exec(select(User).where(User.email == staff)).one()
        started = totp.begin_enrolment(box=box, user=user)
        secret = pyotp.TOTP(started.secret)
        totp.confirm_enrolment(
            session=session, box=box, account=account, sealed=started.sealed,
            code=secret.at(earlier), now=earlier,
        )  # fmt: skip

    answer = sign_in(client, staff, PASSWORD, params={})
    assert answer.status_code == 200
    assert answer.json()["location"] == f"{routes.LOGIN_CODE}?next=/staff"
    cookie = set_cookie(answer)
    assert cookie.startswith(f"{CHALLENGE_COOKIE}=") and "HttpOnly" in cookie
    assert "Path=/auth" in cookie and SESSION_COOKIE not in cookie
    code_url = f"{routes.AUTH}/sign-in/code"
    wrong = client.post(code_url, json={"code": "000000"})
    assert wrong.status_code == 401 and wrong.json()["code"] == "invalid_code"
    bad = client.post(code_url, json={"code": 123456})
    assert bad.status_code == 422
    right = client.post(code_url, json={"code": secret.at(moment), "next": "/reports"})
    assert right.status_code == 200 and right.json()["location"] == "/reports"
    assert account_for(engine=engine, token=client.cookies[SESSION_COOKIE]).email == staff
    replayed = client.post(code_url, json={"code": secret.at(moment)})
    assert replayed.status_code == 401  # the cookie went with the session; the code too
    client.cookies.clear()
    expired = client.post(code_url, json={"code": secret.at(moment)})
    assert expired.status_code == 401 and expired.json()["code"] == "sign_in_expired"
