"""Why a tracking link does not redirect: the refusal every check of a click raises."""

from __future__ import annotations

from models import RefusalReason as Reason


class TrackingRefusal(Exception):
    """A click that is not redirected: why (stored with the refused click), the status and
    a sentence for the person."""

    def __init__(self, reason: Reason, status: int, title: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.status, self.title, self.message = status, title, message
