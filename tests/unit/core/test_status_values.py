"""Status constants are `StrEnum`s whose stored values are the plain strings they always were,
so existing rows, raw SQL and the JSON answers need no migration."""

from __future__ import annotations

from enum import StrEnum

import pytest
import sqlalchemy as sa

from api.core.db import write_session
from models import Offerwall, OfferwallStatus, PostbackStatus, ProgressStatus

STORED = {
    OfferwallStatus: ["pending", "approved", "rejected", "suspended"],
    PostbackStatus: ["pending", "delivered", "failed"],
    ProgressStatus: ["started", "completed", "expired", "capped"],
}


@pytest.mark.parametrize("status", list(STORED), ids=lambda s: s.__name__)
def test_each_status_set_keeps_its_stored_strings(status: type[StrEnum]):
    assert [member.value for member in status] == STORED[status]
    for member in status:
        assert member == member.value
        assert f"{member}" == member.value


@pytest.mark.parametrize("member", [m for s in STORED for m in s], ids=str)
def test_the_driver_stores_the_plain_string(engine, member: StrEnum):
    with engine.connect() as conn:
        stored = conn.execute(sa.select(sa.literal(member, sa.String(16)))).scalar_one()
    assert type(stored) is str and stored == member.value


def test_an_offerwall_row_reads_back_as_the_same_string(engine):
    with write_session(engine) as session:
        session.add(Offerwall(name="Acme", status=OfferwallStatus.SUSPENDED))
    with engine.connect() as conn:
        raw = conn.execute(sa.text("SELECT status FROM offerwall")).scalar_one()
    assert raw == "suspended"
