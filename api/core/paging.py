"""One page of a longer list, counted and cut in SQL: the staff queue, the delivery log,
the accounts and the mail outbox."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import sqlalchemy as sa
from sqlmodel import Session

PAGE_SIZE = 20
T = TypeVar("T")


@dataclass(frozen=True)
class Window(Generic[T]):
    """One page of rows of a longer list, with where it sits in it."""

    rows: list[T]
    total: int
    page: int
    pages: int


def searched(query: Any, search: str, *columns: Any) -> Any:
    """The query narrowed to rows where any of `columns` holds `search`, case-insensitively
    (a missing value holds nothing); the query itself when the search is blank."""
    text = search.strip().lower()
    if not text:
        return query
    like = f"%{text}%"
    return query.where(
        sa.or_(*(sa.func.lower(sa.func.coalesce(column, "")).like(like) for column in columns))
    )


def paged(session: Session, query: Any, page: int) -> tuple[Sequence[Any], int, int, int]:
    """One page of an ordered query: its rows, the total, the page (clamped) and pages."""
    counted = sa.select(sa.func.count()).select_from(query.order_by(None).subquery())
    total = session.execute(counted).scalar_one()
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(max(1, page), pages)
    rows = session.execute(query.limit(PAGE_SIZE).offset((page - 1) * PAGE_SIZE)).all()
    return rows, total, page, pages
