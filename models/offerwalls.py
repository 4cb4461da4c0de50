"""Offerwalls: a publisher's listing of offers, its API key, currency and postback URL."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import JSONDoc, UTCDateTime, new_uuid, utcnow


class OfferwallStatus(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    SUSPENDED = "suspended"


class Offerwall(SQLModel, table=True):
    __tablename__ = "offerwall"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    # The publisher's company.
    name: str = Field(max_length=200)
    website: str | None = Field(default=None, max_length=2048)
    contact_name: str | None = Field(default=None, max_length=200)
    # Why staff rejected the application (shown to the publisher).
    rejection_reason: str | None = Field(default=None, sa_type=sa.Text)
    status: str = Field(default=OfferwallStatus.PENDING, max_length=16, index=True)
    # Public offerwall id, issued on approval; carried by tracking links as `owid`.
    owid: str | None = Field(default=None, unique=True, max_length=32)
    # The API key, AES-GCM sealed, and its keyed digest for look-ups (api/core/crypto.py).
    api_key_sealed: str | None = Field(default=None, sa_type=sa.Text)
    api_key_digest: str | None = Field(default=None, unique=True, max_length=64)
    currency_name: str = Field(default="US Dollar", max_length=64)
    currency_code: str = Field(default="USD", max_length=3)
    # Units of the offerwall's currency per USD, and the decimals payouts are rounded to.
    exchange_rate: float = Field(default=1.0)
    currency_decimals: int = Field(default=2)
    postback_url: str | None = Field(default=None, sa_type=sa.Text)
    # Where reversal postbacks go instead of postback_url, when set.
    reversal_url: str | None = Field(default=None, sa_type=sa.Text)
    # A rotated API key's digest, valid until the grace period the publisher chose ends,
    # and the key sealed: rotate-secrets recomputes the digest, and wall links' `sig` made
    # with it are checked against it.
    api_key_previous_digest: str | None = Field(default=None, index=True, max_length=64)
    api_key_previous_sealed: str | None = Field(default=None, sa_type=sa.Text)
    api_key_previous_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The postback signing secret (the Questwall-Signature header), sealed; shown to the
    # publisher once. After a rotation the previous one also signs until its overlap ends.
    signing_secret_sealed: str | None = Field(default=None, sa_type=sa.Text)
    signing_secret_shown_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    signing_secret_previous_sealed: str | None = Field(default=None, sa_type=sa.Text)
    signing_secret_previous_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Endpoint health: the failures in a row, since when every attempt has failed, and
    # since when deliveries are paused (None: they flow).
    consecutive_failures: int = Field(default=0)
    failing_since: datetime | None = Field(default=None, sa_type=UTCDateTime)
    deliveries_paused_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The hosted wall (GET /wall): its theme, the origins whose pages may frame it
    # (Content-Security-Policy frame-ancestors), and whether its links must carry `sig`.
    wall_title: str = Field(default="", max_length=80)
    wall_logo_url: str = Field(default="", max_length=2048)
    wall_accent: str = Field(default="#4f46e5", max_length=7)
    wall_currency_icon: str = Field(default="", max_length=2048)
    wall_origins: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    wall_require_signature: bool = Field(default=False)
    # Whether the test player's conversions send postbacks (marked as tests: no by default).
    test_postbacks: bool = Field(default=False)
    # Fraud screening (docs/fraud.md#rules): what a risk signal does at this offerwall,
    # where it differs from the default (signal → "refuse", "hold" or "allow"), and
    # whether held and rejected conversions send postbacks ({status} pending/rejected).
    fraud_actions: dict[str, str] | None = Field(default_factory=dict, sa_type=JSONDoc)
    review_postbacks: bool = Field(default=False, sa_column_kwargs={"server_default": sa.false()})
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    approved_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
