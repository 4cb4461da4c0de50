"""The OpenAPI document tells clients what they really get, and wrong methods say what is
allowed."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("path", ["/missions/{mission_id}", "/quests/{quest_id}"])
def test_tracking_links_document_their_redirect_and_refusal_pages(client, path):
    operation = client.get("/v2/openapi.json").json()["paths"][path]["get"]
    assert set(operation["responses"]) == {"302", "400", "403", "404", "410", "503"}
    assert "Location" in operation["responses"]["302"]["headers"]
    refusal = operation["responses"]["410"]["content"]
    assert list(refusal) == ["text/html"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert {"owid", "uid", "clickid", "platform_sub1", "platform_sub2", "platform_sub3"} <= set(
        params
    )
    assert params["owid"]["required"] is True
    assert params["uid"]["schema"]["minLength"] == 1


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("GET", "/v2/custom-events", "POST"),
        ("PUT", "/v2/platform-users/lookup", "POST"),
        ("POST", "/offerwall/offers", "GET"),
        ("DELETE", "/missions/m1", "GET"),
    ],
)
def test_a_wrong_method_is_405_with_allow(client, method, path, allow):
    answer = client.request(method, path)
    assert answer.status_code == 405
    assert answer.headers["allow"] == allow
    body = answer.json()
    assert body["code"] == "method_not_allowed" and body["statusCode"] == 405


def test_request_schemas_state_their_lengths(client):
    schemas = client.get("/v2/openapi.json").json()["components"]["schemas"]
    event, identifier = schemas["EventIn"]["properties"], schemas["IdentifierIn"]["properties"]
    assert (event["userId"]["minLength"], event["userId"]["maxLength"]) == (1, 128)
    assert (event["event"]["minLength"], event["event"]["maxLength"]) == (1, 64)
    assert identifier["userId"]["minLength"] == 1
    assert identifier["steamId"]["minLength"] == 1
    assert schemas["CustomEventsRequest"]["properties"]["gameId"]["minLength"] == 1
    assert schemas["LookupRequest"]["properties"]["gameId"]["minLength"] == 1
