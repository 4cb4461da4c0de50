"""Reports: clicks, starts, conversions, conversion rate and payout per day, per offer,
per offerwall or per country, over a date range. Aggregated in SQL (GROUP BY); Python
only joins the grouped rows (one per day, offer, … ) and names them."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.services.access import Account
from api.services.errors import DomainError
from models import Click, Conversion, Game, Mission, Offerwall, Quest, Role

DIMENSIONS = ("day", "offer", "offerwall", "country")
MAX_DAYS = 366


class ReportError(DomainError, ValueError):
    pass


@dataclass(frozen=True)
class ReportRow:
    key: str
    label: str
    clicks: int
    starts: int
    conversions: int
    rate: str  # conversions per click, as a percentage
    payout: str  # USD
    payout_usd: float


@dataclass(frozen=True)
class Report:
    rows: list[ReportRow]
    totals: ReportRow


def parse_range(start: str, end: str, *, today: date | None = None) -> tuple[date, date]:
    """An inclusive date range; empty means the last 30 days."""
    today = today or datetime.now(UTC).date()
    try:
        last = date.fromisoformat(end) if end else today
        first = date.fromisoformat(start) if start else last - timedelta(days=29)
    except ValueError:
        raise ReportError("Dates are YYYY-MM-DD.") from None
    if first > last:
        raise ReportError("The range starts after it ends.")
    if (last - first).days >= MAX_DAYS:
        raise ReportError(f"A report covers at most {MAX_DAYS} days.")
    return first, last


def _bounds(first: date, last: date) -> tuple[datetime, datetime]:
    return (
        datetime.combine(first, time.min, tzinfo=UTC),
        datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC),
    )


def _scope(account: Account, offerwall_id: str | None) -> tuple[Any, Any]:
    """WHERE clauses for clicks and conversions the account may see."""
    click_where: sa.ColumnElement[bool] = sa.true()
    conv_where: sa.ColumnElement[bool] = sa.true()
    if account.role == Role.PUBLISHER or offerwall_id:
        wall = account.offerwall_id if account.role == Role.PUBLISHER else offerwall_id
        click_where = col(Click.offerwall_id) == wall
        conv_where = col(Conversion.offerwall_id) == wall
    if account.role == Role.DESIGNER:
        games = sa.select(col(Game.id)).where(col(Game.studio_id) == account.studio_id)
        missions = sa.select(col(Mission.id)).where(col(Mission.game_id).in_(games))
        quests = sa.select(col(Quest.id)).where(col(Quest.game_id).in_(games))
        own_clicks = sa.or_(col(Click.mission_id).in_(missions), col(Click.quest_id).in_(quests))
        # Narrows the offerwall filter above rather than replacing it.
        click_where = sa.and_(click_where, own_clicks)
        conv_where = sa.and_(conv_where, col(Conversion.mission_id).in_(missions))
    return click_where, conv_where


def build_report(
    *,
    session: Session,
    account: Account,
    dimension: str,
    first: date,
    last: date,
    offerwall_id: str | None = None,
) -> Report:
    if dimension not in DIMENSIONS:
        raise ReportError(f"Report by one of: {', '.join(DIMENSIONS)}.")
    since, until = _bounds(first, last)
    click_where, conv_where = _scope(account, offerwall_id)
    click_key, conv_key, join_click = {
        "day": (
            sa.func.date(col(Click.created_at)),
            sa.func.date(col(Conversion.created_at)),
            False,
        ),
        "offer": (
            sa.func.coalesce(col(Click.quest_id), col(Click.mission_id)),
            sa.func.coalesce(col(Conversion.quest_id), col(Conversion.mission_id)),
            False,
        ),
        "offerwall": (col(Click.offerwall_id), col(Conversion.offerwall_id), False),
        "country": (
            sa.func.coalesce(col(Click.country), "??"),
            sa.func.coalesce(col(Click.country), "??"),
            True,
        ),
    }[dimension]
    clicks = session.execute(
        sa.select(
            click_key.label("k"),
            sa.func.count(),
            sa.func.sum(sa.case((col(Click.started), 1), else_=0)),
        )
        .where(click_where, col(Click.created_at) >= since, col(Click.created_at) < until)
        .group_by(click_key)
    ).all()
    conversions_q: Any = sa.select(
        conv_key.label("k"), sa.func.count(), sa.func.sum(col(Conversion.payout_micros))
    ).where(conv_where, col(Conversion.created_at) >= since, col(Conversion.created_at) < until)
    if join_click:
        conversions_q = conversions_q.join(Click, col(Click.id) == col(Conversion.click_id))
    conversions = session.execute(conversions_q.group_by(conv_key)).all()

    merged: dict[str, list[int]] = {}
    for key, n, started in clicks:
        merged.setdefault(str(key), [0, 0, 0, 0])[0:2] = [int(n), int(started or 0)]
    for key, n, micros in conversions:
        entry = merged.setdefault(str(key), [0, 0, 0, 0])
        entry[2:4] = [int(n), int(micros or 0)]
    labels = _labels(session, dimension, list(merged))
    rows = [_row(key, labels.get(key, key), *values) for key, values in merged.items()]
    rows.sort(key=lambda r: r.key if dimension == "day" else (-r.payout_usd, -r.clicks, r.label))
    total = [sum(v[i] for v in merged.values()) for i in range(4)]
    return Report(rows, _row("total", "Total", *total))


def _row(
    key: str, label: str, clicks: int, starts: int, conversions: int, micros: int
) -> ReportRow:
    rate = f"{100 * conversions / clicks:.1f}%" if clicks else "–"
    usd = micros / 1_000_000
    return ReportRow(key, label, clicks, starts, conversions, rate, f"${usd:,.2f}", usd)


def _labels(session: Session, dimension: str, keys: list[str]) -> dict[str, str]:
    if dimension == "offer" and keys:
        missions = session.execute(
            sa.select(col(Mission.id), col(Mission.title)).where(col(Mission.id).in_(keys))
        )
        quests = session.execute(
            sa.select(col(Quest.id), col(Quest.name)).where(col(Quest.id).in_(keys))
        )
        return {**dict(missions.all()), **{k: f"{n} (quest)" for k, n in quests.all()}}
    if dimension == "offerwall" and keys:
        walls = session.execute(
            sa.select(col(Offerwall.id), col(Offerwall.name)).where(col(Offerwall.id).in_(keys))
        )
        return dict(walls.all())
    if dimension == "country":
        return {"??": "unknown"}
    return {}


def to_csv(report: Report, dimension: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([dimension, "clicks", "starts", "conversions", "conversion_rate", "payout_usd"])
    for r in [*report.rows, report.totals]:
        writer.writerow([r.label, r.clicks, r.starts, r.conversions, r.rate, f"{r.payout_usd:.2f}"])
    return out.getvalue()
