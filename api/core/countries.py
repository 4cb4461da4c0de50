"""Country names for the editors' country picker, from ISO 3166-1 as `pycountry` ships it
(Debian's iso-codes data): "Germany (DE)", searchable by name or code, submitted as the
code. Common names where ISO's are formal ("South Korea", not "Korea, Republic of"), and
the names people type that ISO does not use ("UK", "USA", "Deutschland", "Holland")."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import pycountry


@dataclass(frozen=True)
class Country:
    code: str  # ISO 3166-1 alpha-2, as offers store it
    name: str
    label: str  # "Germany (DE)"


# Names in common use that are none of ISO's (its codes, name, common or official name).
ALIASES = {
    "UK": "GB",
    "Great Britain": "GB",
    "Britain": "GB",
    "England": "GB",
    "Scotland": "GB",
    "Wales": "GB",
    "Northern Ireland": "GB",
    "America": "US",
    "Deutschland": "DE",
    "Holland": "NL",
    "The Netherlands": "NL",
    "Nederland": "NL",
    "España": "ES",
    "Italia": "IT",
    "Brasil": "BR",
    "Österreich": "AT",
    "Schweiz": "CH",
    "Suisse": "CH",
    "Polska": "PL",
    "Turkey": "TR",
    "Ivory Coast": "CI",
    "Czech Republic": "CZ",
    "Macedonia": "MK",
    "Swaziland": "SZ",
    "Burma": "MM",
    "Cape Verde": "CV",
    "East Timor": "TL",
    "Vatican": "VA",
    "UAE": "AE",
    "Emirates": "AE",
}


@lru_cache(maxsize=1)
def countries() -> tuple[Country, ...]:
    """Every country, by name."""
    found = []
    for entry in pycountry.countries:
        name = getattr(entry, "common_name", None) or entry.name
        found.append(Country(entry.alpha_2, name, f"{name} ({entry.alpha_2})"))
    return tuple(sorted(found, key=lambda c: c.name.casefold()))


@lru_cache(maxsize=1)
def _by_code() -> dict[str, Country]:
    return {c.code: c for c in countries()}


def country(code: str) -> Country:
    """The country of a code; one the list does not know keeps its code as its name."""
    code = code.strip().upper()
    return _by_code().get(code) or Country(code, code, code)


def _fold(text: str) -> str:
    """Text as it is compared: no accents, no dots ("U.S.A."), one space, any case."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch)).replace(".", "")
    return " ".join(plain.split()).casefold()


@lru_cache(maxsize=1)
def _by_name() -> dict[str, Country]:
    """Every exact spelling of a country: its label, its two- and three-letter codes, its
    ISO name, common and official names, and the aliases."""
    by_code = _by_code()
    names: dict[str, Country] = {}
    for entry in pycountry.countries:
        found = by_code[entry.alpha_2]
        for attribute in ("alpha_2", "alpha_3", "name", "common_name", "official_name"):
            value = getattr(entry, attribute, None)
            if value:
                names[_fold(value)] = found
        names[_fold(found.label)] = found
    for alias, code in ALIASES.items():
        names[_fold(alias)] = by_code[code]
    return names


def find_country(text: str) -> Country | None:
    """What someone typed into the picker: a label ("Germany (DE)"), a code ("de", "DEU"),
    a name in any case ("germany", "UK", "Deutschland"), or else the first country whose
    name starts with it, then the first whose label contains it ("germ", "kingdom"); None
    when nothing matches."""
    wanted = _fold(text)
    if not wanted:
        return None
    exact = _by_name().get(wanted)
    if exact is not None:
        return exact
    listed = countries()
    for match in (
        lambda c: _fold(c.name).startswith(wanted),
        lambda c: wanted in _fold(c.label),
    ):
        found = next((c for c in listed if match(c)), None)
        if found is not None:
            return found
    return None


def find_countries(text: str) -> tuple[list[Country], list[str]]:
    """The countries of a picker's text, and the parts of it that name none: the whole
    text as one name first ("Korea, Republic of"), else each part between commas or
    semicolons ("USA, UK")."""
    whole = find_country(text)
    if whole is not None:
        return [whole], []
    found: list[Country] = []
    unknown: list[str] = []
    for part in (p.strip() for p in re.split(r"[,;]", text)):
        match = find_country(part) if part else None
        if match is not None:
            found.append(match)
        elif part:
            unknown.append(part)
    return found, unknown


def unknown_countries(names: list[str]) -> str:
    """What a picker says about text that names no country."""
    quoted = " or ".join(f"“{name}”" for name in names)
    return f"No country is called {quoted}: pick one from the list, or empty the box."
