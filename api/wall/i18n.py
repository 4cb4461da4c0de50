"""The wall's languages: English in the templates, every other one a gettext catalog.

`api/wall/locales/<language>.po` is a language: adding `fr.po` (translated from
`wall.pot`, which `make messages` extracts from the templates) adds French, nothing else.
Catalogs are compiled in memory when first used. The player's language is the `lang` query
parameter when it names a supported one, else the best match of the browser's
Accept-Language, else English. Numbers are formatted the language's way (Babel).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale, negotiate_locale
from babel.dates import format_datetime
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal
from babel.support import NullTranslations, Translations

from api.core.money import rounded

LOCALES = Path(__file__).parent / "locales"
SOURCE = "en"  # the language the templates are written in
# At most this many languages of an Accept-Language header are considered.
MAX_ASKED = 20


@cache
def supported() -> tuple[str, ...]:
    """English, then every catalog's language in name order."""
    return (SOURCE, *sorted(p.stem for p in LOCALES.glob("*.po")))


@cache
def translations(language: str) -> NullTranslations:
    if language == SOURCE:
        return NullTranslations()
    with (LOCALES / f"{language}.po").open("rb") as po:
        catalog = read_po(po, locale=language)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return Translations(fp=compiled)


def _asked(accept_language: str) -> list[str]:
    """The languages of an Accept-Language header, most wanted first (q=0 means not)."""
    weighted: list[tuple[float, int, str]] = []
    for position, part in enumerate(accept_language.split(",")[:MAX_ASKED]):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        name, _, value = params.strip().partition("=")
        if name.strip() == "q":
            try:
                quality = float(value)
            except ValueError:
                quality = 0.0
        if tag and tag != "*" and 0 < quality <= 1:
            weighted.append((-quality, position, tag.strip().replace("_", "-")))
    return [tag for *_, tag in sorted(weighted)]


def choose(lang: str | None, accept_language: str | None) -> str:
    """The supported language for a `lang` parameter and an Accept-Language header."""
    available = supported()
    if lang and lang.lower() in available:
        return lang.lower()
    asked = _asked(accept_language or "")
    # Babel matches "de-AT" to "de"; aliases off: a header's tags are taken as written.
    found = negotiate_locale(asked, available, sep="-", aliases={})
    return found or SOURCE


@dataclass(frozen=True)
class Language:
    """A supported language, ready to translate and format numbers."""

    code: str

    @property
    def name(self) -> str:
        return str(Locale.parse(self.code).get_display_name(self.code) or self.code)

    def amount(self, value: Decimal, decimals: int) -> str:
        """Rounded as postbacks round (`money.rounded`); Babel only writes the digits the
        language's way (its own rounding is half-even, never reached)."""
        return _amount(self.code, rounded(value, decimals), decimals)

    def number(self, value: float) -> str:
        shown: float | int = int(value) if float(value).is_integer() else value
        return _number(self.code, shown)

    def moment(self, value: datetime) -> str:
        """A moment in UTC, the language's way: "29 Nov, 05:00 UTC"."""
        shown = format_datetime(value, "d MMM, HH:mm", tzinfo=UTC, locale=self.code)
        return f"{shown} UTC"


@lru_cache(maxsize=4096)
def _number(language: str, value: float) -> str:
    """A count grouped the language's way (the few a wall shows, formatted once each)."""
    return str(format_decimal(value, locale=language))


@lru_cache(maxsize=4096)
def _amount(language: str, value: Decimal, decimals: int) -> str:
    """A payout with its currency's decimals, grouped the language's way (a wall shows the
    same few payouts again and again: formatted once each)."""
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "")
    return str(format_decimal(value, format=pattern, locale=language))
