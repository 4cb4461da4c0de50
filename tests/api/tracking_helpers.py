from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from tests.factories import ANDROID_UA


def click(
    client,
    kind: str,
    offer_id: str,
    owid: str | None,
    *,
    ip: str = "203.0.113.7",
    ua: str = ANDROID_UA,
    **params: str,
):
    query = {k: v for k, v in {"owid": owid, **params}.items() if v is not None}
    return client.get(
        f"/{kind}s/{offer_id}",
        params=query,
        headers={"user-agent": ua, "x-forwarded-for": ip},
    )


def platform_id(response) -> str:
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["location"]).query)["platformid"][0]
