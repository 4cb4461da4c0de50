"""The key check: which master keys the database's secrets are sealed under.

`master_key_check` holds, for every master key that may have sealed something in the
database, a known value sealed under it. Before a process uses the database it checks
that its configured keys (`SECRET_KEY`, `SECRET_KEY_PREVIOUS`) open every row: a wrong
key is refused at start instead of answering signed requests with 500 and valid API
keys with 401, or sealing new secrets under a second, unrelated key.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from api.core.crypto import SecretBox, bound_to
from api.core.db import new_session, write_connection
from api.core.sql import insert_ignore
from models import MasterKeyCheck

CHECK_CONTEXT = "master_key_check"
CHECK_VALUE = "questwall master key check"
_table: sa.Table = MasterKeyCheck.__table__  # type: ignore[attr-defined]


class MasterKeyMismatch(RuntimeError):
    """The configured master keys cannot open what the database holds."""

    def __init__(self, key_ids: list[str]):
        self.key_ids = key_ids
        super().__init__(
            "SECRET_KEY does not match this database: its secrets are sealed under master "
            f"key id {', '.join(key_ids)}, which neither SECRET_KEY nor SECRET_KEY_PREVIOUS "
            "opens. Set SECRET_KEY to the key the database was created with (while rotating, "
            "list the old key in SECRET_KEY_PREVIOUS)."
        )


def unreadable_key_ids(conn: Connection, box: SecretBox) -> list[str]:
    """Recorded master key ids whose check value the configured keys cannot open."""
    rows = conn.execute(sa.select(_table.c.key_id, _table.c.check_sealed)).all()
    return [row.key_id for row in rows if not _opens(box, row.key_id, row.check_sealed)]


def _opens(box: SecretBox, key_id: str, sealed: str) -> bool:
    try:
        return box.open(sealed, context=CHECK_CONTEXT, row=key_id) == CHECK_VALUE
    except ValueError:
        return False


def recorded_key_ids(conn: Connection) -> set[str]:
    return set(conn.execute(sa.select(_table.c.key_id)).scalars())


def record_current_key(conn: Connection, box: SecretBox) -> None:
    """Note that the current master key may seal secrets in this database (idempotent)."""
    record_key(conn, box, box.current_key_id)


def record_key(conn: Connection, box: SecretBox, key_id: str) -> None:
    """Note that the configured key `key_id` has sealed or keyed something here."""
    sealed = box.seal_with(
        CHECK_VALUE, associated_data=bound_to(CHECK_CONTEXT, key_id), key_id=key_id
    )
    insert_ignore(conn, _table, {"key_id": key_id, "check_sealed": sealed}, ["key_id"])


def forget_other_keys(conn: Connection, box: SecretBox) -> None:
    """After every secret is resealed under the current key, only it is recorded."""
    conn.execute(sa.delete(_table).where(_table.c.key_id != box.current_key_id))


def verify_master_keys(engine: Engine, box: SecretBox) -> None:
    """Refuse master keys that cannot open the database's secrets (MasterKeyMismatch);
    record the current key the first time it is used (a fresh database, a rotation)."""
    with new_session(engine) as session:
        conn = session.connection()
        missing = unreadable_key_ids(conn, box)
        recorded = recorded_key_ids(conn)
    if missing:
        raise MasterKeyMismatch(missing)
    if box.current_key_id not in recorded:
        with write_connection(engine) as conn:
            record_current_key(conn, box)
