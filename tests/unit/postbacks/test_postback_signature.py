"""The Questwall-Signature header (`api/postbacks/signature.py`), checked against an
HMAC worked out here: its format, one v1 per secret while a rotation overlaps, and the
5 minute tolerance on both sides of the receiver's clock."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from api.postbacks.signature import HEADER, TOLERANCE_SECONDS, header_value, verify

URL = "https://pub.example/pb?tx=tx-1&amount=150&h=0a1b"
T = 1764000000
NEW, OLD = "qw_ps_new-secret", "qw_ps_old-secret"


def _hmac(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def test_the_header_is_t_then_the_hex_hmac_of_t_a_dot_and_the_url():
    value = header_value(URL, [NEW], timestamp=T)
    assert HEADER == "Questwall-Signature"
    assert re.fullmatch(r"t=\d+,v1=[0-9a-f]{64}", value)
    assert value == f"t={T},v1={_hmac(NEW, f'{T}.{URL}')}"
    assert verify(value, URL, NEW, now=T)


def test_without_a_timestamp_it_is_signed_now():
    value = header_value(URL, [NEW])
    assert verify(value, URL, NEW)


def test_during_an_overlap_there_is_one_v1_per_secret_the_current_first():
    value = header_value(URL, [NEW, OLD], timestamp=T)
    new, old = _hmac(NEW, f"{T}.{URL}"), _hmac(OLD, f"{T}.{URL}")
    assert value == f"t={T},v1={new},v1={old}"
    # A receiver that knows either secret accepts; one that knows neither does not.
    assert verify(value, URL, NEW, now=T) and verify(value, URL, OLD, now=T)
    assert not verify(value, URL, "qw_ps_other", now=T)


@pytest.mark.parametrize("offset", [-TOLERANCE_SECONDS, 0, TOLERANCE_SECONDS])
def test_a_signature_within_five_minutes_of_the_clock_is_accepted(offset):
    assert TOLERANCE_SECONDS == 300
    assert verify(header_value(URL, [NEW], timestamp=T), URL, NEW, now=T + offset)


@pytest.mark.parametrize("offset", [-TOLERANCE_SECONDS - 1, TOLERANCE_SECONDS + 1])
def test_a_signature_older_or_newer_than_five_minutes_is_refused(offset):
    # Now is 301 s after t (a replay), or 301 s before it (a clock ahead).
    assert not verify(header_value(URL, [NEW], timestamp=T), URL, NEW, now=T + offset)


def test_another_url_or_timestamp_is_refused():
    value = header_value(URL, [NEW], timestamp=T)
    assert not verify(value, URL.replace("amount=150", "amount=999"), NEW, now=T)
    assert not verify(value, "http" + URL.removeprefix("https"), NEW, now=T)
    # The signature of one moment does not fit another t.
    moved = value.replace(f"t={T}", f"t={T + 1}")
    assert not verify(moved, URL, NEW, now=T)


@pytest.mark.parametrize(
    "header",
    [
        "",
        f"v1={_hmac(NEW, f'{T}.{URL}')}",  # no t
        f"t={T}",  # no v1
        f"t=later,v1={_hmac(NEW, f'{T}.{URL}')}",
        f"t=\u00b2,v1={_hmac(NEW, f'{T}.{URL}')}",  # a digit that is not a number
        f"t={T},v2={_hmac(NEW, f'{T}.{URL}')}",  # another scheme
        f"t={T},v1={_hmac(NEW, f'{T}.{URL}').upper()}",
    ],
)
def test_a_malformed_header_is_refused(header):
    assert not verify(header, URL, NEW, now=T)


def test_spaces_after_the_commas_are_allowed():
    value = header_value(URL, [NEW, OLD], timestamp=T).replace(",", ", ")
    assert verify(value, URL, OLD, now=T)


def test_odd_headers_are_refused_not_raised():
    url = "https://pub.example/pb?tx=1"
    assert not verify("t=" + "9" * 5000 + ",v1=ab", url, "s")
    header = header_value(url, ["s"])
    assert not verify(header.split(",v1=")[0] + ",v1=é" + "a" * 63, url, "s")
