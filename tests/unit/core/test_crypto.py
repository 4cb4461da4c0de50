"""Secrets at rest, keyed digests, passwords, signatures."""

from __future__ import annotations

import pytest

from api.core.crypto import (
    SecretBox,
    hash_password,
    open_api_key,
    open_client_secret,
    seal_api_key,
    seal_client_secret,
    sign_request,
    signature_matches,
    token_digest,
    verify_password,
)


def test_sealed_secret_opens_and_is_not_clear_text():
    box = SecretBox(["master-1"])
    token = seal_client_secret(box, "qw_cs_supersecret", client_id="qw_ci_a")
    assert "supersecret" not in token
    assert token.startswith(box.current_key_id + ":")
    assert open_client_secret(box, token, client_id="qw_ci_a") == "qw_cs_supersecret"


def test_sealing_twice_gives_different_ciphertexts():
    box = SecretBox(["master-1"])
    assert box.seal("s", context="c", row="r") != box.seal("s", context="c", row="r")


def test_context_is_bound():
    box = SecretBox(["master-1"])
    token = seal_client_secret(box, "s", client_id="same-id")
    with pytest.raises(ValueError, match="does not open"):
        open_api_key(box, token, owid="same-id")


def test_client_secret_moved_to_another_credential_does_not_open():
    box = SecretBox(["master-1"])
    token = seal_client_secret(box, "qw_cs_a", client_id="qw_ci_a")
    with pytest.raises(ValueError, match="does not open"):
        open_client_secret(box, token, client_id="qw_ci_b")


def test_api_key_moved_to_another_offerwall_does_not_open():
    box = SecretBox(["master-1"])
    token = seal_api_key(box, "qw_ak_a", owid="owaaaaaaaaaa")
    assert open_api_key(box, token, owid="owaaaaaaaaaa") == "qw_ak_a"
    with pytest.raises(ValueError, match="does not open"):
        open_api_key(box, token, owid="owbbbbbbbbbb")


def test_a_secret_cannot_be_sealed_without_its_row():
    with pytest.raises(ValueError, match="bound to its row"):
        seal_client_secret(SecretBox(["master-1"]), "s", client_id="")


def test_master_key_rotation_opens_old_tokens_and_seals_with_new():
    old = SecretBox(["master-1"])
    token = old.seal("secret", context="c", row="r")
    rotated = SecretBox(["master-2", "master-1"])
    assert rotated.open(token, context="c", row="r") == "secret"
    assert rotated.needs_reseal(token)
    assert not rotated.needs_reseal(rotated.seal("secret", context="c", row="r"))
    assert old.digest("v") in rotated.candidate_digests("v")


def test_unknown_key_id_is_a_clear_error():
    token = SecretBox(["master-1"]).seal("s", context="c", row="r")
    with pytest.raises(ValueError, match="no master key"):
        SecretBox(["master-2"]).open(token, context="c", row="r")


def test_session_token_digest_does_not_depend_on_the_master_key():
    assert token_digest("qw_s_abc") == token_digest("qw_s_abc") != token_digest("qw_s_abd")


def test_digest_is_keyed():
    assert SecretBox(["a"]).digest("value") != SecretBox(["b"]).digest("value")
    assert SecretBox(["a"]).digest("value") == SecretBox(["a"]).digest("value")


def test_passwords_are_argon2id():
    hashed = hash_password("correct horse battery staple")
    assert hashed.startswith("$argon2id$")
    assert verify_password("correct horse battery staple", hashed)
    assert not verify_password("wrong", hashed)


def test_production_passwords_cost_argon2ids_recommended_work():
    """The tests hash at a cheap cost (conftest.py); everywhere else the real one applies:
    64 MiB of memory, 3 passes, 4 lanes (passlib's argon2id defaults)."""
    from tests.conftest import PRODUCTION_PASSWORDS

    hashed = PRODUCTION_PASSWORDS.hash("x")
    assert hashed.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert verify_password("x", hashed)


def test_signature_is_hmac_sha256_over_concatenation():
    # A fixed example, computed independently:
    # printf 'cid1700000000000{"a":1}' | openssl dgst -sha256 -hmac secret
    expected = "020e1165a18ee04c94a3109215c32e0fc2830a662ef219278002606ad62ceec5"
    actual = sign_request("secret", "cid", "1700000000000", b'{"a":1}')
    assert actual == expected
    assert signature_matches(actual, expected.upper())
    assert not signature_matches(actual, expected[:-1] + "0")
