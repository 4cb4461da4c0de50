"""The bundled country database (`api/core/geo.py`)."""

from __future__ import annotations

from api.core.geo import BundledCountries


def test_the_bundled_country_database_knows_public_addresses():
    countries = BundledCountries()
    assert countries.country("8.8.8.8") == "US"
    assert countries.country("2001:4860:4860::8888") == "US"
    assert countries.country("127.0.0.1") is None
    assert countries.country("not an ip") is None
