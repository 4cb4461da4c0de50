"""The forgotten password's endpoints: one neutral answer whether the address has an
account or not, the per-IP limit, the reset with the mailed token, the Origin check."""

from __future__ import annotations

import re

import pytest
from sqlmodel import select

from api.core.db import new_session
from models import MailMessage
from portal import routes
from tests.factories import make_user
from tests.portal.accounts.test_session_routes import PASSWORD, make_client, sign_in

NEW = "a brand new passphrase"


@pytest.fixture
def client(engine, box, settings):
    return make_client(engine, box, settings.model_copy(update={"trusted_proxies": "127.0.0.1"}))


def forgot(client, email: str, **extra):
    return client.post(routes.FORGOT, json={"email": email}, **extra)


def mailed_token(engine) -> str:
    with new_session(engine) as session:
        [message] = session.exec(select(MailMessage)).all()
    return re.findall(r"#token=(\S+)", message.body)[0]


def test_the_answer_is_the_same_for_an_account_and_for_no_account(client, engine):
    make_user(engine, "ada@example.com")
    known, unknown = forgot(client, "ada@example.com"), forgot(client, "nobody@example.com")
    assert known.status_code == unknown.status_code == 200
    assert (
        known.json()
        == unknown.json()
        == {
            "statusCode": 200,
            "message": "OK",
            "location": "/forgot-password?sent=1",
        }
    )
    assert mailed_token(engine).startswith("qw_r_")  # one mail, for the account only


def test_a_malformed_address_is_an_error_beside_the_field(client):
    answer = forgot(client, "not an address")
    assert answer.status_code == 422
    assert answer.json()["details"][0]["path"] == "email"


def test_one_ip_is_limited_and_told_when_to_come_back(client):
    for n in range(10):
        assert forgot(client, f"n{n}@example.com").status_code == 200
    answer = forgot(client, "n@example.com")
    assert (answer.status_code, answer.json()["code"]) == (429, "rate_limited")
    assert int(answer.headers["Retry-After"]) > 0
    # Another client behind the trusted proxy is counted apart.
    other = forgot(client, "n@example.com", headers={"X-Forwarded-For": "198.51.100.4"})
    assert other.status_code == 200


def test_the_mailed_token_sets_the_password_and_leads_to_the_sign_in(client, engine):
    make_user(engine, "ada@example.com")
    assert sign_in(client, "ada@example.com", PASSWORD).status_code == 200
    forgot(client, "ada@example.com")
    body = {"token": mailed_token(engine), "password": NEW, "confirm": NEW}
    answer = client.post(routes.RESET, json=body)
    assert answer.json()["location"] == "/login?reset=1"
    assert sign_in(client, "ada@example.com", PASSWORD).status_code == 401
    assert sign_in(client, "ada@example.com", NEW).status_code == 200
    again = client.post(routes.RESET, json=body)
    assert again.status_code == 422 and "works once" in again.json()["message"]


def test_a_refused_new_password_names_its_field(client, engine):
    make_user(engine, "ada@example.com")
    forgot(client, "ada@example.com")
    answer = client.post(
        routes.RESET, json={"token": mailed_token(engine), "password": NEW, "confirm": "other"}
    )
    assert answer.status_code == 422
    assert answer.json()["details"] == [{"path": "confirm", "message": "The two passwords differ."}]


@pytest.mark.parametrize("path", [routes.FORGOT, routes.RESET])
def test_another_origin_is_refused(client, path):
    answer = client.post(path, json={}, headers={"Origin": "https://evil.example"})
    assert (answer.status_code, answer.json()["code"]) == (403, "origin_not_allowed")
