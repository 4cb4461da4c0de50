"""One settings object, read from the environment (and an optional `.env` file)."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from api.core.net import parse_networks
from api.core.smtp import parse_smtp_url
from models.signals import parse_defaults

PROJECT_ROOT = Path(__file__).resolve().parents[2]


# The description of a number whose 0 means "off" (said in its refusal; README.md too).
OFF = "0 turns it off"
# DATABASE_POOLER's values: none, or PgBouncer in transaction mode.
POOLERS = ("", "pgbouncer")


class SettingsError(RuntimeError):
    """A setting the service cannot run with; the message names it and what to do."""


class Settings(BaseSettings):
    # Errors never echo a value: SMTP_URL and the keys hold secrets.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", hide_input_in_errors=True)

    # Where the embedded defaults keep their files (SQLite database, generated master key).
    data_dir: Path = Field(default=PROJECT_ROOT / "data", alias="QUESTWALL_DATA_DIR")
    database_url: str = Field(default="", alias="DATABASE_URL")
    # "pgbouncer": DATABASE_URL reaches PostgreSQL through PgBouncer (or a pooler like it) in
    # transaction mode, where a transaction may run on any server connection: no prepared
    # statements, and no LISTEN through it (docs/operations.md#behind-pgbouncer).
    database_pooler: str = Field(default="", alias="DATABASE_POOLER")
    # PostgreSQL itself, not the pooler, for the one connection each serving process keeps
    # to LISTEN for changes. Empty: DATABASE_URL's, or none behind a pooler.
    database_direct_url: str = Field(default="", alias="DATABASE_DIRECT_URL", repr=False)
    # Master key. Empty: the embedded default creates one under data/ on first use.
    secret_key: str = Field(default="", alias="SECRET_KEY", repr=False)
    # Earlier master keys, comma-separated, still accepted for decryption after a rotation.
    secret_key_previous: str = Field(default="", alias="SECRET_KEY_PREVIOUS", repr=False)
    base_url: str = Field(default="http://localhost:8000", alias="BASE_URL")
    # Production refuses the generated master key (set QUESTWALL_ENV=production).
    environment: str = Field(default="development", alias="QUESTWALL_ENV")

    # Proxies whose X-Forwarded-For is believed for the client IP (comma-separated IPs or
    # CIDR networks). Empty: the socket's address is the client's.
    trusted_proxies: str = Field(default="", alias="TRUSTED_PROXIES")
    # Redis shared by every process (redis://host:6379/0): the ingestion rate limit, the
    # per-IP sign-in limit and the portal's state, so `questwall serve --workers N` and
    # `questwall api --workers N` limit as one. Empty: each process counts in its own memory.
    redis_url: str = Field(default="", alias="REDIS_URL", repr=False)
    # The start of every key the limits write, so several deployments can share one Redis.
    redis_key_prefix: str = Field(default="questwall", min_length=1, alias="REDIS_KEY_PREFIX")
    # Seconds a serving process goes on serving after SIGTERM, its `/readyz` answering 503,
    # so a load balancer's probes see it go before it stops taking connections (0: stop at
    # once; docs/operations.md#health-probes).
    drain_seconds: float = Field(default=5, ge=0, le=300, alias="QUESTWALL_DRAIN_SECONDS")
    # Who may read GET /metrics (comma-separated IPs or networks; others get 404).
    metrics_allow: str = Field(default="127.0.0.1/32,::1/128", alias="METRICS_ALLOW")
    # Days the audit trail keeps its events; `questwall prune` removes older ones.
    audit_retention_days: int = Field(default=400, ge=1, alias="AUDIT_RETENTION_DAYS")
    # Log lines: `json` (one object per line) or `text`; empty: json when
    # QUESTWALL_ENV=production, else text. LOG_LEVEL: DEBUG, INFO, WARNING or ERROR.
    log_format: Literal["", "json", "text"] = Field(default="", alias="LOG_FORMAT")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", alias="LOG_LEVEL"
    )
    # A MaxMind country database (.mmdb) to use instead of the bundled one.
    geoip_database: str = Field(default="", alias="GEOIP_DATABASE")

    # Postbacks: private, loopback and other non-public targets are refused unless allowed
    # (tests and closed networks allow them); the source address for publishers' allow-lists.
    postback_allow_private: bool = Field(default=False, alias="POSTBACK_ALLOW_PRIVATE")
    postback_source_address: str = Field(default="", alias="POSTBACK_SOURCE_ADDRESS")
    # Seconds a postback may take to connect, and in all (the contract's 5 s and 10 s).
    postback_connect_timeout: float = Field(
        default=5.0, gt=0, le=600, allow_inf_nan=False, alias="POSTBACK_CONNECT_TIMEOUT"
    )
    postback_total_timeout: float = Field(
        default=10.0, gt=0, le=600, allow_inf_nan=False, alias="POSTBACK_TOTAL_TIMEOUT"
    )
    postback_lease_seconds: float = Field(
        default=60.0, gt=0, le=86400, allow_inf_nan=False, alias="POSTBACK_LEASE_SECONDS"
    )
    # Requests one dispatcher runs at once for one offerwall, so a publisher whose receiver
    # hangs cannot hold every connection.
    postback_per_offerwall: int = Field(default=4, ge=1, alias="POSTBACK_PER_OFFERWALL")
    # The in-process dispatcher of `questwall serve` (off for scaled API processes).
    postback_dispatcher: bool = Field(default=True, alias="POSTBACK_DISPATCHER")
    # Endpoint health: an offerwall whose every attempt has failed for this long (and at
    # least this many in a row) is paused; its postbacks wait until the publisher resumes.
    # 0: pause on the failures in a row alone.
    postback_pause_after_seconds: float = Field(
        default=86400,
        ge=0,
        le=365 * 86400,
        allow_inf_nan=False,
        alias="POSTBACK_PAUSE_AFTER_SECONDS",
        description="0 pauses on the failures in a row alone",
    )
    postback_pause_min_failures: int = Field(default=3, ge=1, alias="POSTBACK_PAUSE_MIN_FAILURES")
    # Postbacks per second an offerwall's queue is released at when it resumes.
    postback_resume_rate: float = Field(
        default=10, ge=0.001, allow_inf_nan=False, alias="POSTBACK_RESUME_RATE"
    )
    # Where a JSON notice goes when an offerwall's deliveries pause or resume (optional).
    alert_webhook_url: str = Field(default="", alias="ALERT_WEBHOOK_URL", repr=False)

    # The signed requests' contract (docs/contract.md): the timestamp window, the body's
    # size and the events or identifiers one request may carry.
    signature_window_seconds: int = Field(
        default=300, ge=1, le=86400, alias="SIGNATURE_WINDOW_SECONDS"
    )
    max_body_bytes: int = Field(default=1024 * 1024, ge=1, alias="MAX_BODY_BYTES")
    max_items_per_request: int = Field(default=1000, ge=1, alias="MAX_ITEMS_PER_REQUEST")
    # Signed requests per second per client id, and the burst allowed (per API process
    # without REDIS_URL, for all of them together with it).
    ingest_rate_per_second: float = Field(
        default=500, gt=0, allow_inf_nan=False, alias="QUESTWALL_INGEST_RATE"
    )
    ingest_burst: float = Field(
        default=1000, ge=1, allow_inf_nan=False, alias="QUESTWALL_INGEST_BURST"
    )
    # Reporting API requests (`GET /offerwall/reports`) per minute per offerwall, and the
    # burst allowed; each builds a report over up to a year of clicks and conversions.
    reports_rate_per_minute: float = Field(
        default=30, gt=0, allow_inf_nan=False, alias="QUESTWALL_REPORTS_RATE"
    )
    reports_burst: float = Field(
        default=10, ge=1, allow_inf_nan=False, alias="QUESTWALL_REPORTS_BURST"
    )
    # Click screening (docs/fraud.md): tracking-link clicks a minute from one IP address,
    # and by one player (uid) of an offerwall, before further clicks are refused; 0 is off.
    clicks_per_ip_minute: int = Field(
        default=30, ge=0, alias="QUESTWALL_CLICKS_PER_IP", description=OFF
    )
    clicks_per_uid_minute: int = Field(
        default=10, ge=0, alias="QUESTWALL_CLICKS_PER_UID", description=OFF
    )
    # Refuse clicks from scripts, crawlers and headless browsers (by the User-Agent).
    refuse_scripted_agents: bool = Field(default=True, alias="QUESTWALL_REFUSE_SCRIPTED_AGENTS")
    # Networks whose clicks are refused (hosting providers, known farms): comma-separated.
    blocked_networks: str = Field(default="", alias="QUESTWALL_BLOCKED_NETWORKS")
    # Hosting and datacenter networks (docs/fraud.md#signals), besides those the bundled
    # ASN data names: comma-separated. Their clicks carry the hosting_network signal.
    hosting_networks: str = Field(default="", alias="QUESTWALL_HOSTING_NETWORKS")
    # The deployment's own default action per risk signal, over the built-in ones
    # (docs/fraud.md#rules): "multi_offerwall=allow,hosting_network=refuse".
    fraud_defaults: str = Field(default="", alias="QUESTWALL_FRAUD_DEFAULTS")
    # Conversions held for review are approved by themselves after this many hours
    # unless a reviewer decides or flags them first; 0 keeps them until a reviewer does.
    review_auto_approve_hours: float = Field(
        default=72,
        ge=0,
        le=24 * 365,
        allow_inf_nan=False,
        alias="QUESTWALL_REVIEW_AUTO_APPROVE_HOURS",
        description="0 keeps them for a reviewer",
    )
    # The shared_ip signal: this many players clicked from the converting click's IP
    # address with its device signature in the last 24 hours (0: off).
    players_per_ip: int = Field(default=20, ge=0, alias="QUESTWALL_PLAYERS_PER_IP", description=OFF)
    # The stale_event signal: a completing event timed this many hours before it arrived
    # (0: off).
    stale_event_hours: float = Field(
        default=24,
        ge=0,
        le=24 * 365,
        allow_inf_nan=False,
        alias="QUESTWALL_STALE_EVENT_HOURS",
        description=OFF,
    )
    # Events whose time is older than this many days are removed by `questwall prune`
    # (docs/operations.md#retention); progress, conversions and postbacks are kept.
    event_retention_days: int = Field(default=90, ge=1, le=36500, alias="EVENT_RETENTION_DAYS")

    # Mail (api/mail/outbox.py): the SMTP server messages go out through
    # (smtp://user:pass@host:587?starttls=1, smtps://user:pass@host:465). Empty: they stay
    # in the outbox table, where staff read them on the "Mail outbox" page.
    smtp_url: str = Field(default="", alias="SMTP_URL", repr=False)
    # The From of every message. Empty: "Questwall <noreply@BASE_URL's host>".
    mail_from: str = Field(default="", alias="MAIL_FROM")

    @field_validator("database_pooler")
    @classmethod
    def _known_pooler(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in POOLERS:
            raise ValueError(
                "set it to pgbouncer when DATABASE_URL goes through PgBouncer in transaction "
                "mode, or leave it empty"
            )
        return value

    @field_validator("database_direct_url")
    @classmethod
    def _postgresql_url(cls, value: str) -> str:
        value = value.strip()
        if value:
            try:
                backend = make_url(value).get_backend_name()
            except ArgumentError:
                backend = ""
            if backend != "postgresql":  # refused without the value: it holds a password
                raise ValueError(
                    "set it to postgresql+psycopg://user:password@host:5432/db (PostgreSQL "
                    "itself, not the pooler), or leave it empty"
                )
        return value

    @field_validator("smtp_url")
    @classmethod
    def _valid_smtp_url(cls, value: str) -> str:
        if value.strip():
            parse_smtp_url(value)  # refused at start with what is wrong, never the password
        return value.strip()

    @property
    def sender(self) -> str:
        """The From address of outgoing mail."""
        host = urlsplit(self.base_url).hostname or "localhost"
        return self.mail_from or f"Questwall <noreply@{host}>"

    @field_validator("fraud_defaults")
    @classmethod
    def _valid_fraud_defaults(cls, value: str) -> str:
        parse_defaults(value)  # refused here, at start, with what is wrong
        return value

    @field_validator("base_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("trusted_proxies", "blocked_networks", "hosting_networks", "metrics_allow")
    @classmethod
    def _valid_networks(cls, value: str) -> str:
        # Refused here, at start, rather than on the first tracking link that reads it.
        try:
            parse_networks(value)
        except ValueError as exc:
            raise ValueError(
                f"{exc}; list IP addresses or networks separated by commas, "
                "e.g. 10.0.0.0/8,192.0.2.7, or leave it empty"
            ) from None
        return value

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_case(cls, value: object) -> object:
        return value.strip().upper() if isinstance(value, str) else value

    @property
    def resolved_log_format(self) -> str:
        if self.log_format:
            return self.log_format
        return "json" if self.environment == "production" else "text"

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'questwall.db'}"

    def master_keys(self) -> list[str]:
        """The current master key first, then any previous ones."""
        current = self.secret_key or _embedded_secret_key(self)
        previous = [k.strip() for k in self.secret_key_previous.split(",") if k.strip()]
        return [current, *previous]


def _embedded_secret_key(settings: Settings) -> str:
    if settings.environment == "production":
        raise SettingsError(
            "SECRET_KEY must be set when QUESTWALL_ENV=production: set it to a long random "
            "value (e.g. from `openssl rand -base64 48`) and keep it with your backups"
        )
    path = settings.data_dir / "secret_key"
    if not path.exists():
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        # Written with owner-only permissions; never printed.
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(48))
    return path.read_text().strip()


@lru_cache
def get_settings() -> Settings:
    return Settings()
