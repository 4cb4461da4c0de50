"""The checks every process runs before it uses the database, and their refusals.

Each refusal is one line naming the setting and what to do; `questwall` prints it
without a traceback and exits non-zero (as do `questwall serve` before the portal is
built and the API's ASGI entry point).
"""

from __future__ import annotations

import sys

from pydantic import ValidationError
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from api.core.config import Settings, SettingsError, get_settings
from api.core.crypto import get_secret_box
from api.core.db import DatabaseNotMigrated, ensure_migrated, get_engine, ping
from api.core.keycheck import MasterKeyMismatch, verify_master_keys

URL_EXAMPLES = "sqlite:///path/to/questwall.db or postgresql+psycopg://user:password@host/db"


class StartRefused(RuntimeError):
    """The process must not start; the message is the one line to show."""


def load_settings() -> Settings:
    """The settings, or StartRefused naming the first setting the environment gets wrong."""
    try:
        return get_settings()
    except ValidationError as exc:
        raise StartRefused(_setting_problem(exc)) from None


def _setting_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    name = ".".join(str(part) for part in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{name} is invalid: {message}{_what_to_do(name)}."


def _what_to_do(name: str) -> str:
    """For a number or a switch: what to do about it, with its default (and what 0 means
    where 0 turns it off); other settings' messages say what to do themselves."""
    for field in Settings.model_fields.values():
        if field.alias == name and field.annotation in (int, float, bool):
            meaning = f" ({field.description})" if field.description else ""
            default = field.default
            shown = str(default).lower() if isinstance(default, bool) else f"{default:g}"
            return f"; correct it{meaning}, or unset it for the default ({shown})"
    return ""


def check_master_key_setting(settings: Settings) -> None:
    try:
        settings.master_keys()
    except SettingsError as exc:
        raise StartRefused(str(exc)) from None


def database_engine() -> Engine:
    """The engine of DATABASE_URL, once it is a URL of a database we can drive and reach."""
    try:
        engine = get_engine()
    except (ArgumentError, NoSuchModuleError, ImportError, ValueError):
        raise StartRefused(
            f"DATABASE_URL is not a database URL Questwall can use: set it to {URL_EXAMPLES}."
        ) from None
    except OSError as exc:
        raise StartRefused(
            f"DATABASE_URL: cannot create the SQLite database's directory ({exc.strerror}); "
            "choose a writable path."
        ) from None
    try:
        ping(engine)
    except SQLAlchemyError as exc:
        where = engine.url.render_as_string(hide_password=True)
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StartRefused(
            f"DATABASE_URL: cannot reach the database at {where} ({reason}); "
            "start the database or correct DATABASE_URL."
        ) from None
    check_pooler(get_settings(), engine)
    return engine


def check_pooler(settings: Settings, engine: Engine) -> None:
    """DATABASE_POOLER and DATABASE_DIRECT_URL: for PostgreSQL only, and a direct URL that
    reaches it, connected to as the listener for changes connects (api/core/changes.py)."""
    if engine.dialect.name != "postgresql":
        for name, value in (
            ("DATABASE_POOLER", settings.database_pooler),
            ("DATABASE_DIRECT_URL", settings.database_direct_url),
        ):
            if value:
                raise StartRefused(
                    f"{name} is for PostgreSQL behind PgBouncer, not {engine.dialect.name}: "
                    "unset it or set DATABASE_URL to PostgreSQL."
                )
        return
    if not settings.database_direct_url:
        return
    url = make_url(settings.database_direct_url)  # a PostgreSQL URL: checked with the settings
    cargs, cparams = engine.dialect.create_connect_args(url)
    cparams.setdefault("connect_timeout", 10)
    try:
        engine.dialect.loaded_dbapi.connect(*cargs, **cparams).close()
    except engine.dialect.loaded_dbapi.Error as exc:
        where = url.render_as_string(hide_password=True)
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise StartRefused(
            f"DATABASE_DIRECT_URL: cannot reach the database at {where} ({reason}); "
            "start it or correct DATABASE_DIRECT_URL."
        ) from None


def check_ready() -> None:
    """Everything a server, worker or database command needs: valid settings, a reachable
    and migrated database, and master keys that open the secrets it holds."""
    settings = load_settings()
    check_master_key_setting(settings)
    engine = database_engine()
    try:
        ensure_migrated(engine)
    except DatabaseNotMigrated as exc:
        raise StartRefused(f"DATABASE_URL: {exc}") from None
    check_master_keys(engine)


def check_master_keys(engine: Engine) -> None:
    try:
        verify_master_keys(engine, get_secret_box())
    except MasterKeyMismatch as exc:
        raise StartRefused(str(exc)) from None


def exit_unless_ready() -> None:
    """For entry points outside the CLI (the ASGI app, the portal): refuse in one line."""
    try:
        check_ready()
    except StartRefused as exc:
        print(f"Error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
