"""Postback URL rendering and hash_key, checked against values worked out by hand."""

from __future__ import annotations

import hashlib

from api.postbacks.url import render, unknown_macros

VALUES = {
    "uid": "user 42",
    "owid": "owabc",
    "mission_id": "m-1",
    "mission_name": "Kill 10 & win",
    "quest_id": "",
    "quest_name": "",
    "payout": "375",
    "payout_usd": "1.5",
    "clickid": "c/9",
    "session_ip": "203.0.113.7",
    "transaction_id": "tx-1",
    "timestamp": 1700000000,
    "platform_sub1": "a",
    "platform_sub2": "",
    "platform_sub3": "",
    "currency": "GEM",
}


def test_fixed_example_written_out_by_hand():
    url = render(
        "https://pub.example/pb?tx={transaction_id}&uid={uid}&amount={payout}&h={hash_key}",
        VALUES,
        "secret-key",
    )
    # Values are RFC 3986 encoded: "user 42" → user%2042.
    assert url.startswith("https://pub.example/pb?tx=tx-1&uid=user%2042&amount=375&h=")
    # The hash: decoded pairs without h, sorted by name, joined with &, then & + the key.
    # sha1("amount=375&tx=tx-1&uid=user 42&secret-key"), computed independently:
    assert url.endswith("&h=5e12dbcac5ce40384b31f387dc4ee958e0f9e0a0")
    assert hashlib.sha1(b"amount=375&tx=tx-1&uid=user 42&secret-key").hexdigest() == (
        "5e12dbcac5ce40384b31f387dc4ee958e0f9e0a0"
    )


def test_hash_is_appended_when_the_template_has_no_hash_macro():
    url = render("https://pub.example/pb?tx={transaction_id}", VALUES, "k")
    expected = hashlib.sha1(b"tx=tx-1&k").hexdigest()
    assert url == f"https://pub.example/pb?tx=tx-1&hash_key={expected}"
    bare = render("https://pub.example/pb", VALUES, "k")
    assert bare == "https://pub.example/pb?hash_key=" + hashlib.sha1(b"&k").hexdigest()


def test_every_macro_and_legacy_macro():
    template = (
        "https://p.example/?a={uid}&b={owid}&c={mission_id}&d={mission_name}&e={quest_id}"
        "&f={quest_name}&g={payout}&h={payout_usd}&i={clickid}&j={session_ip}"
        "&k={transaction_id}&l={timestamp}&m={platform_sub1}&n={aff_click_id}&o={aff_sub}"
        "&p={affiliate_id}&q={currency}&r={datetime}&s={goal_id}&t={goal_name}&u={offer_id}"
        "&v={offer_name}&w={hash_key}"
    )
    url = render(template, VALUES, "k")
    assert "a=user%2042&b=owabc&c=m-1&d=Kill%2010%20%26%20win&e=&f=&g=375&h=1.5&i=c%2F9" in url
    assert "j=203.0.113.7&k=tx-1&l=1700000000&m=a&n=c%2F9&o=user%2042&p=owabc&q=GEM" in url
    assert "r=1700000000&s=m-1&t=Kill%2010%20%26%20win&u=m-1&v=Kill%2010%20%26%20win&w=" in url
    assert "{" not in url


def test_unknown_macros_are_left_as_written_and_reported():
    url = render("https://p.example/?x={not_a_macro}&t={transaction_id}", VALUES, "k")
    assert "x={not_a_macro}" in url
    assert unknown_macros("https://p.example/?x={not_a_macro}&y={uid}&z={offer_name}") == [
        "not_a_macro"
    ]
