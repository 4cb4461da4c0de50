"""Request and response schemas of the ingestion API, shared by the API and its docs.

Validators raise `PydanticCustomError(code, message)`, so each rejected item is
reported with a stable machine code (see docs/errors.md).
"""

from __future__ import annotations

import ipaddress
import math
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from email_validator import EmailNotValidError, validate_email
from eth_hash.auto import keccak
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic_core import PydanticCustomError

from models.types import utcnow

EVENT_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,64}")
# RFC 3339 date-time: a zone (Z or an offset) is required, fractions are optional.
RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
)
DIGITS_1_20 = re.compile(r"\d{1,20}")
WALLET = re.compile(r"0x[0-9a-fA-F]{40}")
MAX_FUTURE = timedelta(minutes=5)
# PostgreSQL stores no NUL character in text or JSONB; refused on every database alike.
NUL = "\x00"
NUL_MESSAGE = "Remove the NUL character: text cannot hold it."
# What no text column stores: NUL, and half of a surrogate pair on its own, which has no
# UTF-8 form (a JSON or YAML escape such as "\ud800" decodes to one).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# How deep traits may nest (the traits object itself is level 1). JSON encoders have
# recursion limits (orjson's is 254) and deeper traits are a mistake, not game data.
MAX_TRAITS_DEPTH = 32

# The identifier fields besides userId, in the order they are applied.
IDENTIFIER_KINDS = (
    "discordId",
    "twitterId",
    "appleId",
    "steamId",
    "email",
    "epicGamesId",
    "telegramId",
    "walletAddress",
    "platformUserId",
)


def _fail(code: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(code, message)


def parse_event_time(raw: str, *, now: datetime | None = None) -> datetime:
    """RFC 3339 with a zone → aware UTC datetime truncated to milliseconds."""
    match = RFC3339.fullmatch(raw)
    if match is None:
        raise _fail(
            "invalid_time", "time must be RFC 3339 with a zone, e.g. 2026-01-31T12:00:00.000Z"
        )
    date, clock, fraction, zone = match.groups()
    micros = (fraction or "").ljust(6, "0")[:6]
    zone = "+00:00" if zone in ("Z", "z") else zone
    try:
        parsed = datetime.fromisoformat(f"{date}T{clock}.{micros}{zone}")
        # Year 1 with a positive offset, or year 9999 with a negative one, falls
        # outside the years a datetime holds once converted to UTC.
        parsed = parsed.astimezone(UTC)
    except ValueError:
        raise _fail("invalid_time", "time is not a real date and time") from None
    except OverflowError:
        raise _fail("invalid_time", "time is out of range once converted to UTC") from None
    parsed = parsed.replace(microsecond=parsed.microsecond // 1000 * 1000)
    if parsed - (now or utcnow()) > MAX_FUTURE:
        raise _fail("time_in_future", "time is more than 5 minutes in the future")
    return parsed


def _user_id(value: str) -> str:
    if not 1 <= len(value) <= 128:
        raise _fail("invalid_user_id", "userId must be 1 to 128 characters")
    if NUL in value:
        raise _fail("invalid_user_id", "userId must not contain the NUL character (U+0000)")
    return value


def text_problem(text: str) -> str | None:
    """Why a text cannot be stored (it holds NUL, or half of a surrogate pair), in the
    words the portal's forms use, or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == NUL:
        return NUL_MESSAGE
    return f"Remove the broken character (U+{ord(found.group()):04X}): text cannot hold it."


def escaped(text: str) -> str:
    """A text with each character no text column holds written as its JSON escape
    (`\\u0000`): a name that can be shown in an error."""
    return _UNSTORABLE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def email_problem(error: EmailNotValidError) -> str:
    """What is wrong with an email address, from email-validator's refusal, said the way
    a person would ("Check the part after the @"), never its own wording: the one
    sentence the API's `invalid_email` and the portal's forms both give."""
    text = str(error)
    if "must have an @-sign" in text or "small commercial at" in text:
        return "Enter an email address such as name@example.com."
    if "something before the @-sign" in text:
        return "Write the name before the @, as in name@example.com."
    if "something after the @-sign" in text:
        return "Write the domain after the @, as in name@example.com."
    if "too long" in text:
        return "This email address is too long."
    if "after the @-sign" in text:
        return "Check the part after the @: a domain such as example.com."
    if "before the @-sign" in text:
        return "Check the part before the @."
    if "two periods in a row" in text:
        return "Check the dots: an address has no two in a row."
    if "period and a hyphen" in text:
        return "Check the dots: an address has no dot next to a dash."
    return "Enter an email address such as name@example.com."


def json_problem(value: Any, *, max_depth: int) -> str | None:
    """Why a parsed JSON value cannot be stored (nested deeper than `max_depth`, or a NUL
    character in a key or a string at any depth), or None when it can.

    Walks with an explicit stack, so a deep value cannot exhaust Python's recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if NUL in node:
                return "must not contain the NUL character (U+0000)"
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > max_depth:
            return f"must not nest deeper than {max_depth} levels"
        if isinstance(node, dict):
            stack.extend((key, depth) for key in node)
            node = node.values()
        stack.extend((child, depth + 1) for child in node)
    return None


def is_eip55(address: str) -> bool:
    """True when a mixed-case address carries a valid EIP-55 checksum."""
    hex_part = address[2:]
    digest = keccak(hex_part.lower().encode("ascii")).hex()
    for char, nibble in zip(hex_part, digest[:40], strict=True):
        if char.isalpha() and (char.isupper() != (int(nibble, 16) >= 8)):
            return False
    return True


def normalize_identifier(kind: str, value: str) -> str:
    """The canonical form identifiers are matched on."""
    if kind == "walletAddress":
        return value.lower()
    return value


# Lengths and patterns for the OpenAPI document only: the validators below enforce them
# with the stable error codes of docs/errors.md.
USER_ID_SCHEMA: dict[str, Any] = {"minLength": 1, "maxLength": 128}
DIGITS: dict[str, Any] = {"pattern": "^[0-9]{1,20}$"}
PLAIN_ID: dict[str, Any] = {"minLength": 1, "maxLength": 255}


class EventIn(BaseModel):
    """One game event (docs/contract.md#events)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    userId: str = Field(
        description="The game's own user id, 1-128 characters.", json_schema_extra=USER_ID_SCHEMA
    )
    event: str = Field(
        description="1-64 characters of letters, digits and _ . : -",
        json_schema_extra={"minLength": 1, "maxLength": 64, "pattern": r"^[A-Za-z0-9_.:\-]+$"},
    )
    time: datetime = Field(
        description="RFC 3339 with a zone; stored in UTC, millisecond precision."
    )
    value: float | None = Field(default=None, description="A finite number, e.g. a score.")
    traits: dict[str, Any] | None = Field(default=None, description="Free-form details.")
    groupId: str | None = Field(
        default=None,
        description='Match or group id, at most 128 characters; "" counts as absent.',
        json_schema_extra={"maxLength": 128},
    )
    playerIp: str | None = Field(
        default=None,
        description=(
            "The player's IP address as your game server saw it (IPv4 or IPv6). Optional: "
            "Questwall keeps only its country, to compare with the country of the "
            "player's click (the country_mismatch signal, docs/fraud.md#signals)."
        ),
        json_schema_extra={"maxLength": 45},
    )
    # The country of playerIp, found once the batch is parsed (`located`); never sent.
    _country: str | None = PrivateAttr(default=None)

    _check_user = field_validator("userId")(classmethod(lambda cls, v: _user_id(v)))

    @field_validator("event")
    @classmethod
    def _event_name(cls, value: str) -> str:
        if EVENT_NAME.fullmatch(value) is None:
            raise _fail(
                "invalid_event_name", "event must be 1-64 letters, digits or _ . : - characters"
            )
        return value

    @field_validator("time", mode="plain")
    @classmethod
    def _time(cls, value: Any) -> datetime:
        if not isinstance(value, str):
            raise _fail("invalid_time", "time must be a string")
        return parse_event_time(value)

    @field_validator("value")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise _fail("invalid_value", "value must be a finite number")
        return value

    @field_validator("traits")
    @classmethod
    def _traits(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        problem = json_problem(value, max_depth=MAX_TRAITS_DEPTH)
        if problem is not None:
            raise _fail("invalid_traits", f"traits {problem}")
        return value

    @field_validator("groupId")
    @classmethod
    def _group(cls, value: str | None) -> str | None:
        if value is not None and len(value) > 128:
            raise _fail("invalid_group_id", "groupId must be at most 128 characters")
        if value is not None and NUL in value:
            raise _fail("invalid_group_id", "groupId must not contain the NUL character (U+0000)")
        return value or None

    @field_validator("playerIp")
    @classmethod
    def _player_ip(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            # A zone id (fe80::1%eth0) names an interface of the sender's, not a player.
            if len(value) > 45 or "%" in value:
                raise ValueError(value)
            address = ipaddress.ip_address(value)
        except ValueError:
            raise _fail("invalid_player_ip", "playerIp must be an IPv4 or IPv6 address") from None
        mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:192.0.2.1 is 192.0.2.1
        return str(mapped or address)

    @property
    def country(self) -> str | None:
        """The country of `playerIp` (ISO 3166 alpha-2), where it is known."""
        return self._country

    def located(self, country: str | None) -> None:
        """Record the country found for `playerIp`."""
        self._country = country


class IdentifierIn(BaseModel):
    """Identifiers of one game user. Omitted: unchanged; null: removed; value: set."""

    model_config = ConfigDict(extra="forbid", strict=True)

    userId: str = Field(
        description="The game's own user id, 1-128 characters.", json_schema_extra=USER_ID_SCHEMA
    )
    discordId: str | None = Field(default=None, description="1-20 digits", json_schema_extra=DIGITS)
    twitterId: str | None = Field(default=None, description="1-20 digits", json_schema_extra=DIGITS)
    appleId: str | None = Field(default=None, json_schema_extra=PLAIN_ID)
    steamId: str | None = Field(default=None, json_schema_extra=PLAIN_ID)
    email: str | None = Field(default=None, description="An e-mail address.")
    epicGamesId: str | None = Field(default=None, json_schema_extra=PLAIN_ID)
    telegramId: str | None = Field(default=None, json_schema_extra=PLAIN_ID)
    walletAddress: str | None = Field(
        default=None,
        description="0x + 40 hex digits (EIP-55)",
        json_schema_extra={"pattern": "^0x[0-9a-fA-F]{40}$"},
    )
    platformUserId: str | None = Field(default=None, description="UUID of a platform user")

    _check_user = field_validator("userId")(classmethod(lambda cls, v: _user_id(v)))

    @field_validator("discordId", "twitterId")
    @classmethod
    def _digits(cls, value: str | None, info: Any) -> str | None:
        if value is not None and DIGITS_1_20.fullmatch(value) is None:
            raise _fail("invalid_identifier", f"{info.field_name} must be 1 to 20 digits")
        return value

    @field_validator("appleId", "steamId", "epicGamesId", "telegramId")
    @classmethod
    def _plain(cls, value: str | None, info: Any) -> str | None:
        if value is not None and (not 1 <= len(value) <= 255 or NUL in value):
            raise _fail(
                "invalid_identifier",
                f"{info.field_name} must be 1 to 255 characters, without NUL (U+0000)",
            )
        return value

    @field_validator("email")
    @classmethod
    def _email(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            checked = validate_email(value, check_deliverability=False)
        except EmailNotValidError as exc:
            raise _fail("invalid_email", email_problem(exc)) from None
        return f"{checked.local_part}@{checked.domain.lower()}"

    @field_validator("walletAddress")
    @classmethod
    def _wallet(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if WALLET.fullmatch(value) is None:
            raise _fail(
                "invalid_wallet_address", "walletAddress must be 0x followed by 40 hex digits"
            )
        hex_part = value[2:]
        mixed = hex_part != hex_part.lower() and hex_part != hex_part.upper()
        if mixed and not is_eip55(value):
            raise _fail("invalid_wallet_address", "walletAddress fails its EIP-55 checksum")
        return value

    @field_validator("platformUserId")
    @classmethod
    def _platform_user(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(uuid.UUID(value))
        except ValueError:
            raise _fail("invalid_platform_user_id", "platformUserId must be a UUID") from None

    def provided(self) -> dict[str, str | None]:
        """The identifier fields this item sets (a value) or removes (None)."""
        return {k: getattr(self, k) for k in IDENTIFIER_KINDS if k in self.model_fields_set}


class CustomEventsRequest(BaseModel):
    """The envelope of POST /v2/custom-events (documentation schema)."""

    gameId: str = Field(min_length=1, description="The game's id (the credential's game).")
    identifiers: list[IdentifierIn] = Field(default_factory=list, max_length=1000)
    events: list[EventIn] = Field(default_factory=list, max_length=1000)


class Accepted(BaseModel):
    identifiers: int
    events: int


class RejectedItem(BaseModel):
    kind: Literal["event", "identifier"]
    index: int
    code: str
    message: str
    field: str | None = None


class CustomEventsResponse(BaseModel):
    statusCode: int = 200
    message: str = "OK"
    accepted: Accepted
    rejected: list[RejectedItem] = Field(default_factory=list)


class ErrorResponse(BaseModel):
    statusCode: int
    error: str
    message: str
    code: str
    details: list[dict[str, Any]] = Field(default_factory=list)
