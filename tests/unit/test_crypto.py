"""Secrets at rest, keyed digests, passwords, signatures."""

from __future__ import annotations

import pytest
from cryptography.exceptions import InvalidTag

from api.core.crypto import (
    SecretBox,
    hash_password,
    sign_request,
    signature_matches,
    verify_password,
)


def test_sealed_secret_opens_and_is_not_clear_text():
    box = SecretBox(["master-1"])
    token = box.seal("qw_cs_supersecret", context="game_credential")
    assert "supersecret" not in token
    assert token.startswith(box.current_key_id + ":")
    assert box.open(token, context="game_credential") == "qw_cs_supersecret"


def test_sealing_twice_gives_different_ciphertexts():
    box = SecretBox(["master-1"])
    assert box.seal("s", context="c") != box.seal("s", context="c")


def test_context_is_bound():
    box = SecretBox(["master-1"])
    token = box.seal("s", context="game_credential")
    with pytest.raises(InvalidTag):
        box.open(token, context="offerwall_api_key")


def test_master_key_rotation_opens_old_tokens_and_seals_with_new():
    old = SecretBox(["master-1"])
    token = old.seal("secret", context="c")
    rotated = SecretBox(["master-2", "master-1"])
    assert rotated.open(token, context="c") == "secret"
    assert rotated.needs_reseal(token)
    assert not rotated.needs_reseal(rotated.seal("secret", context="c"))
    assert old.digest("v") in rotated.candidate_digests("v")


def test_unknown_key_id_is_a_clear_error():
    token = SecretBox(["master-1"]).seal("s", context="c")
    with pytest.raises(ValueError, match="no master key"):
        SecretBox(["master-2"]).open(token, context="c")


def test_digest_is_keyed():
    assert SecretBox(["a"]).digest("value") != SecretBox(["b"]).digest("value")
    assert SecretBox(["a"]).digest("value") == SecretBox(["a"]).digest("value")


def test_passwords_are_argon2id():
    hashed = hash_password("correct horse battery staple")
    assert hashed.startswith("$argon2id$")
    assert verify_password("correct horse battery staple", hashed)
    assert not verify_password("wrong", hashed)


def test_signature_is_hmac_sha256_over_concatenation():
    # A fixed example, computed independently:
    # printf 'cid1700000000000{"a":1}' | openssl dgst -sha256 -hmac secret
    expected = "020e1165a18ee04c94a3109215c32e0fc2830a662ef219278002606ad62ceec5"
    actual = sign_request("secret", "cid", "1700000000000", b'{"a":1}')
    assert actual == expected
    assert signature_matches(actual, expected.upper())
    assert not signature_matches(actual, expected[:-1] + "0")
