"""Why a tracking link does not redirect: the refusal every check of a click raises."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from models import RefusalReason as Reason


def _utc(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


class TrackingRefusal(Exception):
    """A click that is not redirected: why (stored with the refused click), the status and
    a sentence for the person. The title and the message are English, each marked `N_`
    for the hosted wall's catalogs; the message's values (`{when}`) are given apart, so
    that the refusal page translates the message, then fills them in (`translated`)."""

    def __init__(self, reason: Reason, status: int, title: str, message: str, **values: object):
        self.template, self.values = message, values
        super().__init__(self.translated(str, _utc))
        self.reason = reason
        self.status, self.title, self.message = status, title, str(self)

    def translated(self, gettext: Callable[[str], str], moment: Callable[[datetime], str]) -> str:
        """The message in the language `gettext` translates to, its moments written by
        `moment`."""
        template = gettext(self.template)
        if not self.values:
            return template
        shown = {
            name: moment(value) if isinstance(value, datetime) else value
            for name, value in self.values.items()
        }
        return template.format(**shown)
