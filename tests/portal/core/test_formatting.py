"""The portal's moments to the second (`portal/components/formatting.py`): `exact`, as the
postback pages and the staff's publisher list write them, labelled UTC; `second`, as the
events set aside are listed, unlabelled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from portal.components.formatting import exact, second

MOMENT = datetime(2026, 1, 5, 14, 3, 9, 250_000, tzinfo=UTC)


def test_exact_writes_the_second_in_utc():
    assert exact(MOMENT) == "2026-01-05 14:03:09 UTC"
    assert exact(MOMENT.astimezone(timezone(timedelta(hours=2)))) == "2026-01-05 14:03:09 UTC"
    assert exact(None) == ""


def test_second_writes_the_second_unlabelled():
    assert second(MOMENT) == "2026-01-05 14:03:09"
