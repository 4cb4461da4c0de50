"""Country from an IP address; operating system and device signature from a User-Agent.

The country database ships inside the `geoip2fast` package (IPv4 and IPv6, nothing is
downloaded at run time). An operator may point `GEOIP_DATABASE` at their own MaxMind
database (a .mmdb file, e.g. GeoLite2-Country) instead.
"""

from __future__ import annotations

import hashlib
import threading
from functools import lru_cache
from importlib import resources
from typing import Protocol

from ua_parser import parse, parse_os


class CountryLookup(Protocol):
    def country(self, ip: str) -> str | None: ...


class BundledCountries:
    """geoip2fast's bundled data file (IPv4 + IPv6 country ranges)."""

    def __init__(self) -> None:
        self._reader = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._reader is None:
                from geoip2fast import GeoIP2Fast

                data = resources.files("geoip2fast") / "geoip2fast-ipv6.dat.gz"
                self._reader = GeoIP2Fast(geoip2fast_data_file=str(data))
        return self._reader

    def country(self, ip: str) -> str | None:
        reader = self._reader or self._load()
        code = reader.lookup(ip).country_code
        return code if code and len(code) == 2 and code.isalpha() else None


class MaxMindCountries:
    """An operator's MaxMind DB file (GeoIP2/GeoLite2 Country or City)."""

    def __init__(self, path: str) -> None:
        import maxminddb

        self._reader = maxminddb.open_database(path)

    def country(self, ip: str) -> str | None:
        record = self._reader.get(ip)
        if not isinstance(record, dict):
            return None
        country = record.get("country") or record.get("registered_country") or {}
        code = country.get("iso_code") if isinstance(country, dict) else None
        return code if isinstance(code, str) else None


def country_lookup(path: str | None) -> CountryLookup:
    return MaxMindCountries(path) if path else BundledCountries()


_OS_FAMILIES = {
    "android": "Android",
    "ios": "iOS",
    "ipados": "iOS",
    "windows": "Windows",
    "mac os x": "macOS",
    "macos": "macOS",
    "chrome os": "ChromeOS",
    "chromeos": "ChromeOS",
    "linux": "Linux",
    "ubuntu": "Linux",
    "debian": "Linux",
    "fedora": "Linux",
}


@lru_cache(maxsize=4096)
def detect_os(user_agent: str) -> str | None:
    """The operating system family of a User-Agent, in the names offers target."""
    if not user_agent:
        return None
    parsed = parse_os(user_agent[:1024])
    family = parsed.family if parsed is not None else None
    if not family:
        return None
    lowered = family.lower()
    for prefix, name in _OS_FAMILIES.items():
        if lowered.startswith(prefix):
            return name
    return None


# The parts of a parsed User-Agent a device signature is made of.
_DEVICE_PARTS = (
    ("user_agent", ("family", "major", "minor", "patch", "patch_minor")),
    ("os", ("family", "major", "minor", "patch", "patch_minor")),
    ("device", ("family", "brand", "model")),
)


@lru_cache(maxsize=8192)
def device_signature(user_agent: str, accept_language: str = "", platform: str = "") -> str:
    """A digest naming the kind of device a click came from (docs/fraud.md#shared-addresses):
    the browser and system with their versions and the phone's model, as ua-parser reads
    them from the User-Agent (so tokens a script adds to vary it change nothing), with the
    languages (`Accept-Language`) and the platform (`Sec-CH-UA-Platform`) it sends. 32 hex
    characters of a SHA-256; the languages and platform themselves are not kept."""
    parsed = parse(user_agent[:1024])
    parts = [
        str(getattr(getattr(parsed, section), name, None) or "")
        for section, names in _DEVICE_PARTS
        for name in names
    ]
    parts.append("".join(accept_language[:256].split()).lower())
    parts.append(platform[:64].strip().strip('"').lower())
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
