"""Country names for the editors' country picker, from ISO 3166-1 as `pycountry` ships it
(Debian's iso-codes data): "Germany (DE)", searchable by name or code, submitted as the
code. Common names where ISO's are formal ("South Korea", not "Korea, Republic of")."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import pycountry


@dataclass(frozen=True)
class Country:
    code: str  # ISO 3166-1 alpha-2, as offers store it
    name: str
    label: str  # "Germany (DE)"


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


def find_country(text: str) -> Country | None:
    """What someone typed into the picker: a label ("Germany (DE)"), a code ("de"), a
    name ("germany"), or else the first country whose name starts with it, then the first
    whose label contains it ("germ", "kingdom"); None when nothing matches."""
    wanted = text.strip().casefold()
    if not wanted:
        return None
    listed = countries()
    for match in (
        lambda c: wanted in (c.label.casefold(), c.code.casefold(), c.name.casefold()),
        lambda c: c.name.casefold().startswith(wanted),
        lambda c: wanted in c.label.casefold(),
    ):
        found = next((c for c in listed if match(c)), None)
        if found is not None:
            return found
    return None
