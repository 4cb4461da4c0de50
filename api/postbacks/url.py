"""Rendering a postback URL: macros, RFC 3986 encoding and `hash_key` (docs/contract.md#postbacks).

Pure functions: the same code renders outbox rows, the portal's live preview and the
test postback, all from one `PostbackValues`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlsplit

MACRO = re.compile(r"\{([a-z_0-9]+)\}")
HASH_MACRO = "{hash_key}"

# Legacy macros of the original spec, as the macro they stand for.
LEGACY = {
    "aff_click_id": "clickid",
    "aff_sub": "uid",
    "affiliate_id": "owid",
    "datetime": "timestamp",
    "goal_id": "mission_id",
    "goal_name": "mission_name",
    "offer_id": "mission_id",
    "offer_name": "mission_name",
}


@dataclass(frozen=True)
class PostbackValues:
    """The value of every macro but `hash_key` (computed when rendering) for one
    conversion: the only list of them. Built by `api.postbacks.outbox` from an outbox row
    and for the portal's sample, so a real postback and its preview cannot drift apart."""

    uid: str
    owid: str
    mission_id: str
    mission_name: str
    quest_id: str
    quest_name: str
    payout: str
    payout_usd: str
    clickid: str
    session_ip: str
    transaction_id: str
    timestamp: int
    currency: str
    platform_sub1: str
    platform_sub2: str
    platform_sub3: str
    # "approved" for a conversion's postback, "reversed" for its reversal; the reason is
    # the one given for a reversal (empty otherwise).
    status: str = "approved"
    reason: str = ""
    # Live operations (docs/missions.md#live-operations): a recurring or pooled mission's
    # period (its first date, "2026-11-28"), a ladder's stage and its number of stages;
    # empty for other missions.
    period: str = ""
    stage: str = ""
    stage_count: str = ""
    # The offerwall's promotion that applied (docs/publisher-integration.md#promotions): its
    # name ("" without) and multiplier ("1" without); `payout` includes it.
    promotion: str = ""
    multiplier: str = "1"

    def mapping(self) -> dict[str, object]:
        """Macro name → value, as `render` takes it."""
        return dataclasses.asdict(self)


# Every macro a template may use: the values' fields, and the hash over them.
MACROS = (*(field.name for field in dataclasses.fields(PostbackValues)), "hash_key")
KNOWN = frozenset(MACROS) | frozenset(LEGACY)


def unknown_macros(template: str) -> list[str]:
    """Macros of a template that will be left as written (the portal warns about them)."""
    return sorted({m for m in MACRO.findall(template) if m not in KNOWN})


STATUS_MACRO = "{status}"


def with_status(template: str) -> str:
    """A reversal's template: the template as written when it carries `{status}`, else with
    `status={status}` added to its query, so a receiver that ignores the status (or the
    separate reversal URL) still sees `status=reversed` (and the hash covers it)."""
    if STATUS_MACRO in template:
        return template
    parts = urlsplit(template)
    separator = "&" if parts.query else ""
    return parts._replace(query=f"{parts.query}{separator}status={STATUS_MACRO}").geturl()


def _encode(value: object) -> str:
    # RFC 3986: everything but unreserved characters is percent-encoded.
    return quote("" if value is None else str(value), safe="-._~")


def render(template: str, values: Mapping[str, object], api_key: str) -> str:
    """Fill the macros of `template` with `values` (unknown macros stay as written) and
    add the `hash_key`: SHA-1 over the sorted `name=value` pairs of the final URL's query
    (decoded, without the hash parameter itself), joined by `&`, then `&` + the API key."""

    def fill(match: re.Match[str]) -> str:
        name = LEGACY.get(match.group(1), match.group(1))
        if name == "hash_key":
            return HASH_MACRO
        if name not in values:
            return match.group(0)
        return _encode(values[name])

    filled = MACRO.sub(fill, template)
    hash_names = {
        name
        for name, value in parse_qsl(urlsplit(template).query, keep_blank_values=True)
        if value == HASH_MACRO
    }
    pairs = [
        (name, value)
        for name, value in parse_qsl(urlsplit(filled).query, keep_blank_values=True)
        if name not in hash_names
    ]
    digest = hash_key(pairs, api_key)
    if HASH_MACRO in filled:
        return filled.replace(HASH_MACRO, digest)
    parts = urlsplit(filled)
    separator = "&" if parts.query else ""
    query = f"{parts.query}{separator}hash_key={digest}"
    rebuilt = parts._replace(query=query).geturl()
    return rebuilt


def hash_key(pairs: list[tuple[str, str]], api_key: str) -> str:
    """SHA-1 of the sorted `name=value` pairs and the API key (docs/contract.md#postbacks):
    publishers' receivers compute the same, so it cannot change."""
    joined = "&".join(f"{name}={value}" for name, value in sorted(pairs, key=lambda p: p[0]))
    return hashlib.sha1(f"{joined}&{api_key}".encode()).hexdigest()  # noqa: S324 (the documented hash)
