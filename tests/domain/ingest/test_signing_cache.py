"""The opened-secret cache of the signed-caller check (`signing.OpenedSecrets`): a
revocation or rotation still applies to the very next request, whether this process
or another one made it (SQLite and PostgreSQL)."""

from __future__ import annotations

import os

import pytest

from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.core.errors import ApiError
from api.ingest.signing import OpenedSecrets, SignedMessage, authenticate
from api.studios import games
from tests.conftest import MASTER_KEY
from tests.factories import SignedClient, make_game
from tests.live import run_cli


def _request(credential, body: bytes = b"{}") -> SignedMessage:
    headers = SignedClient(None, credential).headers(body)  # type: ignore[arg-type]
    return SignedMessage(
        headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
    )


def _authenticate(engine, box, credential):
    with new_session(engine) as session:
        return authenticate(
            session,
            box=box,
            request=_request(credential),
            game_id=credential.game_id,
            window_seconds=300,
        )


def _refused(engine, box, credential) -> str:
    with pytest.raises(ApiError) as raised:
        _authenticate(engine, box, credential)
    return raised.value.code


def test_a_credential_revoked_in_this_process_is_refused_on_the_next_request(engine, box):
    game = make_game(engine, box)
    assert _authenticate(engine, box, game).client_id == game.client_id  # now cached
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    assert _refused(engine, box, game) == "invalid_signature"


def test_a_credential_revoked_by_another_process_is_refused_on_the_next_request(
    engine, box, db_url, tmp_path
):
    game = make_game(engine, box)
    assert _authenticate(engine, box, game).client_id == game.client_id  # now cached
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": MASTER_KEY,
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
    }
    revoked = run_cli(env, "credential", "revoke", game.game_id, game.client_id)
    assert revoked.returncode == 0, revoked.stderr
    assert _refused(engine, box, game) == "invalid_signature"


def test_a_rotation_refuses_the_old_secret_and_accepts_the_new_one(engine, box):
    old = make_game(engine, box)
    assert _authenticate(engine, box, old).client_id == old.client_id  # now cached
    with write_session(engine) as session:
        new = games.rotate_credential(
            session=session, box=box, game_id=old.game_id, revoke_client_id=old.client_id
        )
    assert _refused(engine, box, old) == "invalid_signature"
    assert _authenticate(engine, box, new).client_id == new.client_id


def test_a_secret_is_opened_once_per_sealed_value_and_box():
    box = SecretBox([MASTER_KEY])
    sealed = box.seal("qw_cs_secret", context="game_credential", row="client-a")
    cache = OpenedSecrets()
    assert cache.open(box, sealed, client_id="client-a") == "qw_cs_secret"
    assert cache.open(box, sealed, client_id="client-a") == "qw_cs_secret"
    # The same sealed value under another client id is not served from the cache: the
    # seal is bound to its row, so it does not open.
    with pytest.raises(ValueError, match="does not open"):
        cache.open(box, sealed, client_id="client-b")
    # Another box (another master key) is not served what this box opened.
    with pytest.raises(ValueError, match="no master key"):
        cache.open(SecretBox(["another-master-key"]), sealed, client_id="client-a")


def test_the_shared_cache_is_bounded():
    box = SecretBox([MASTER_KEY])
    cache = OpenedSecrets()
    for n in range(OpenedSecrets.MAX_ENTRIES + 1):
        sealed = box.seal(f"s{n}", context="game_credential", row=f"c{n}")
        assert cache.open(box, sealed, client_id=f"c{n}") == f"s{n}"
    assert sum(len(v) for v in cache._by_box.values()) <= OpenedSecrets.MAX_ENTRIES
