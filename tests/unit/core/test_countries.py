"""The country picker's list and what typing into it finds (api/core/countries.py)."""

from __future__ import annotations

import pytest

from api.core.countries import (
    countries,
    country,
    find_countries,
    find_country,
    unknown_countries,
)


def test_every_iso_country_is_listed_by_name_with_its_code():
    listed = countries()
    assert len(listed) >= 249
    assert len({c.code for c in listed}) == len(listed)
    assert country("de").label == "Germany (DE)"
    assert country("KR").name == "South Korea"  # the common name, not ISO's formal one
    names = [c.name.casefold() for c in listed]
    assert names == sorted(names)


def test_a_code_the_list_does_not_know_shows_as_itself():
    assert (country("XK").name, country("XK").label) == ("XK", "XK")


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("Germany (DE)", "DE"),
        ("de", "DE"),
        ("germany", "DE"),
        ("germ", "DE"),
        ("united k", "GB"),
        ("kingdom", "GB"),
        ("  fr ", "FR"),
        # Names people type that ISO does not use, and the three-letter codes.
        ("USA", "US"),
        ("usa", "US"),
        ("U.S.A.", "US"),
        ("UK", "GB"),  # not Ukraine, which "uk" starts
        ("uk", "GB"),
        ("Deutschland", "DE"),
        ("deu", "DE"),
        ("Holland", "NL"),
        ("turkey", "TR"),
        ("Turkiye", "TR"),  # accents need not be typed
        ("Korea, Republic of", "KR"),
        ("", None),
        ("Atlantis", None),
    ],
)
def test_what_is_typed_finds_a_country(typed, code):
    found = find_country(typed)
    assert (found.code if found else None) == code


def test_a_list_of_names_finds_each_and_says_which_name_no_country():
    found, unknown = find_countries("USA, uk; Narnia, deutschland")
    assert [c.code for c in found] == ["US", "GB", "DE"]
    assert unknown == ["Narnia"]
    assert unknown_countries(unknown) == (
        "No country is called “Narnia”: pick one from the list, or empty the box."
    )
