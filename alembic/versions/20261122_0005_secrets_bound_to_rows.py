"""secrets bound to their rows, master key check

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 03:40:00.000000

Sealed secrets were bound to their purpose only; from now on the associated data also
names the row (a credential's client id, an offerwall's owid). Every sealed value is
opened and sealed again under the same master key with the new binding, and each master
key found is recorded in `master_key_check`. This needs the master keys only when there
is something to reseal (`SECRET_KEY`, `SECRET_KEY_PREVIOUS`, read as the server does);
keys that cannot open the data stop the migration with the same message as at start.
Portal sessions were kept by a digest keyed by the master key and are now kept by an
unkeyed hash of their random token: open sessions end and their users sign in again.
"""

from collections.abc import Callable, Iterator, Sequence

import sqlalchemy as sa
import sqlmodel

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (table, key column, sealed column, purpose): what holds a sealed secret, and its row.
SEALED = [
    ("game_credential", "client_id", "secret_sealed", "game_credential"),
    ("offerwall", "owid", "api_key_sealed", "offerwall_api_key"),
]


def _legacy(purpose: str, row: str) -> bytes:
    return purpose.encode("utf-8")


def _bound(purpose: str, row: str) -> bytes:
    return f"{purpose}\x1f{row}".encode()


def _sealed_rows(conn: sa.Connection) -> Iterator[tuple[str, str, str, str, str, str]]:
    for table, key, column, purpose in SEALED:
        rows = conn.execute(
            sa.text(f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL")  # noqa: S608 (constants)
        ).all()
        for row_key, sealed in rows:
            yield table, key, column, purpose, row_key, sealed


def _reseal(old_ad: Callable[[str, str], bytes], new_ad: Callable[[str, str], bytes]) -> None:
    """Open every sealed value with `old_ad`, seal it again under the same key with `new_ad`."""
    conn = op.get_bind()
    rows = list(_sealed_rows(conn))
    if not rows:
        return  # an empty database needs no master key
    from api.core.crypto import get_secret_box
    from api.core.keycheck import MasterKeyMismatch, record_key

    box = get_secret_box()
    unreadable: set[str] = set()
    updates = []
    for table, key, column, purpose, row_key, sealed in rows:
        key_id = box.key_id_of(sealed)
        try:
            plain = box.open_with(sealed, associated_data=old_ad(purpose, row_key))
        except ValueError:
            unreadable.add(key_id)
            continue
        resealed = box.seal_with(plain, associated_data=new_ad(purpose, row_key), key_id=key_id)
        updates.append((table, key, column, row_key, resealed, key_id))
    if unreadable:
        raise MasterKeyMismatch(sorted(unreadable))
    for table, key, column, row_key, resealed, _ in updates:
        conn.execute(
            sa.text(f"UPDATE {table} SET {column} = :sealed WHERE {key} = :row"),  # noqa: S608
            {"sealed": resealed, "row": row_key},
        )
    if new_ad is _bound:
        for key_id in sorted({u[5] for u in updates}):
            record_key(conn, box, key_id)


def upgrade() -> None:
    op.create_table(
        "master_key_check",
        sa.Column("key_id", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("check_sealed", sa.Text(), nullable=False),
        sa.Column("recorded_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_master_key_check")),
    )
    _reseal(_legacy, _bound)
    op.execute("DELETE FROM portal_session")


def downgrade() -> None:
    _reseal(_bound, _legacy)
    op.execute("DELETE FROM portal_session")
    op.drop_table("master_key_check")
