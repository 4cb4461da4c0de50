"""`questwall migrate`, `serve`, `api`, `worker`, `prune`, `rotate-secrets` and `demo`:
running and maintaining the service."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from api.cli.common import _refusals, _require_ready
from api.core.config import PROJECT_ROOT, get_settings
from api.core.crypto import get_secret_box

if TYPE_CHECKING:
    from sqlalchemy import Connection, Engine

    from api.core.crypto import SecretBox
    from api.core.key_rotation import Rotated
from api.core.db import get_engine, migrate, pending_migrations, write_session
from api.core.keycheck import MasterKeyMismatch
from api.core.startup import (
    StartRefused,
    check_master_key_setting,
    check_master_keys,
    database_engine,
    load_settings,
)
from api.ops import DRAIN_FILE_VARIABLE, configure_logging, start_tracing, stop_tracing


def _require_ready_to_serve() -> None:
    """The start checks, then the event partitions of this month and the next (PostgreSQL;
    nothing on SQLite), so a fresh deployment's events have their month's partition before
    the first `questwall prune` (they would land in the DEFAULT partition meanwhile)."""
    from api.ingest import ensure_partitions

    _require_ready()
    ensure_partitions(get_engine())


@click.command("migrate")
@click.option("--revision", default="head", show_default=True, help="Target Alembic revision.")
def migrate_cmd(revision: str) -> None:
    """Apply database migrations (DATABASE_URL, default SQLite under data/)."""
    with _refusals():
        check_master_key_setting(load_settings())
        engine = database_engine()
        try:
            migrate(revision=revision)
        except MasterKeyMismatch as exc:
            raise StartRefused(str(exc)) from None
        if not pending_migrations(engine):
            # A fresh database records its master key here (and a wrong one is refused).
            check_master_keys(engine)
    url = engine.url.render_as_string(hide_password=True)
    click.echo(f"Database at {url} is migrated to {revision}.")


@click.command("demo")
@click.option("--players", default=40, show_default=True, type=int, help="Players to simulate.")
@click.option("--receiver-port", default=8799, show_default=True, type=int)
def demo_cmd(players: int, receiver_port: int) -> None:
    """Seed a demo studio, game, missions, quest and publisher, and simulate players."""
    from api.demo import run_demo

    _require_ready()
    try:
        run_demo(
            settings=get_settings(),
            box=get_secret_box(),
            players=players,
            port=receiver_port,
            echo=click.echo,
        )
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None


@click.command("prune")
def prune_cmd() -> None:
    """Delete expired retry and idempotency records, refused signed requests kept for the
    debugger past 24 hours, portal sessions, sign-in failures and reset links, mail,
    alerts and games' webhook messages sent or failed over 30 days ago, processes unseen for
    a week, and events, refused clicks and events set aside by anti-cheat rules older than
    EVENT_RETENTION_DAYS (events in whole months at once on PostgreSQL), and audit events
    older than AUDIT_RETENTION_DAYS; then record the run for the System page."""
    from api.accounts import passwords, prune_sessions
    from api.ingest import prune_events, prune_expired, prune_refused_clicks
    from api.mail import outbox as mail
    from api.ops import PruneRecord, forget_gone_workers, record_prune
    from api.postbacks import alerts
    from api.webhooks import messages as webhook_messages
    from models.types import utcnow

    _require_ready()
    settings = get_settings()
    started = utcnow()
    removed = prune_expired(engine=get_engine(), settings=settings)
    with write_session() as session:
        removed += prune_sessions(session=session)
        now = utcnow()
        removed += passwords.prune(session) + mail.prune(session, now)
        removed += alerts.prune(session, now)
        removed += webhook_messages.prune(session, now)
        removed += forget_gone_workers(session, now)
    click.echo(f"Removed {removed} expired record(s).")
    events = prune_events(get_engine(), retention_days=settings.event_retention_days)
    months = f" ({len(events.dropped_months)} month partition(s) dropped)"
    click.echo(
        f"Removed {events.removed} event(s) older than {settings.event_retention_days} days"
        f"{months if events.dropped_months else ''}."
    )
    refused = prune_refused_clicks(get_engine(), retention_days=settings.event_retention_days)
    click.echo(
        f"Removed {refused} refused click(s) and set-aside event(s) older than "
        f"{settings.event_retention_days} days."
    )
    from api import audit

    kept = settings.audit_retention_days
    gone = audit.prune(get_engine(), keep_days=kept)
    click.echo(f"Removed {gone} audit event(s) older than {kept} days; the chain still checks.")
    # What the staff's System page shows as the last prune: only a run that got this far.
    with write_session() as session:
        record_prune(session, PruneRecord(started, utcnow(), removed, events.removed, refused))


def rotate_master_key(*, engine: Engine, box: SecretBox) -> Rotated:
    """`rotate_secrets`, recorded in the audit trail in its transaction (the key's id and
    the counts: never a key)."""
    from api import audit
    from api.core.key_rotation import rotate_secrets

    def recorded(conn: Connection, done: Rotated) -> None:
        audit.record(
            conn,
            "master_key.rotated",
            target_type="master_key",
            target_id=done.key_id,
            target_name=f"master key {done.key_id}",
            changes={"resealed": [None, done.resealed], "digests": [None, done.digests]},
        )

    return rotate_secrets(engine=engine, box=box, then=recorded)


@click.command("rotate-secrets")
def rotate_secrets_cmd() -> None:
    """Reseal every secret and recompute every keyed digest under SECRET_KEY, so the keys
    in SECRET_KEY_PREVIOUS can be removed afterwards (safe to run again)."""
    _require_ready()
    done = rotate_master_key(engine=get_engine(), box=get_secret_box())
    click.echo(
        f"Resealed {done.resealed} secret(s) and recomputed {done.digests} digest(s) under "
        f"master key {done.key_id}; SECRET_KEY_PREVIOUS is no longer needed."
    )


@click.command("worker")
@click.option("--threads", default=16, show_default=True, type=int, help="Parallel deliveries.")
@click.option(
    "--http-port",
    default=0,
    type=click.IntRange(min=0, max=65535),
    help="Serve /livez and /readyz on this port (0: none).",
)
@click.option("--http-host", default="0.0.0.0", show_default=True)  # noqa: S104
def worker_cmd(threads: int, http_port: int, http_host: str) -> None:
    """Deliver postbacks, games' webhooks, queued mail when SMTP_URL is set and alerts when
    ALERT_WEBHOOK_URL is (run any number, against PostgreSQL; stop with Ctrl-C or SIGTERM)."""
    import signal
    import threading

    from api.ops import DRAINING
    from api.postbacks import Dispatcher
    from api.webhooks import WebhookDispatcher
    from api.worker import alert_sender, alive_then, approve_held, mail_sender, serve_probes

    _require_ready_to_serve()
    settings = get_settings()
    configure_logging(settings.resolved_log_format, settings.log_level)
    start_tracing(get_engine())
    if http_port:
        serve_probes(http_host, http_port)
    dispatcher = Dispatcher(
        engine=get_engine(),
        box=get_secret_box(),
        settings=get_settings(),
        threads=threads,
        periodic=alive_then(approve_held(get_engine()), engine=get_engine(), kind="worker"),
    )
    mail, alerts = mail_sender(), alert_sender()
    senders = [sender for sender in (mail, alerts) if sender is not None]
    webhooks = WebhookDispatcher(
        engine=get_engine(), box=get_secret_box(), settings=get_settings(), threads=threads
    )
    webhooks_stop = threading.Event()

    def stop(*_: object) -> None:
        DRAINING.set()  # /readyz answers 503 while the deliveries under way finish
        dispatcher.stop()
        webhooks_stop.set()
        for sender in senders:
            sender.stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    for sender in senders:
        threading.Thread(target=sender.run, name=f"{sender.kind}-sender", daemon=True).start()
    threading.Thread(
        target=webhooks.run, args=(webhooks_stop,), name="webhook-dispatcher", daemon=True
    ).start()
    sends = " and mail" if mail is not None else ""
    click.echo(f"Delivering postbacks, webhooks{sends} with {threads} threads. Stop with Ctrl-C.")
    dispatcher.run()
    stop_tracing()  # the last attempts' spans


@click.command("serve")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--host", default="0.0.0.0", show_default=True)  # noqa: S104
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Backend processes; more than one needs REDIS_URL (the portal's state lives there).",
)
def serve(port: int, host: str, workers: int) -> None:
    """Serve the portal and the API on one port (production build of the portal)."""
    _require_ready_to_serve()
    if workers > 1 and not get_settings().redis_url:
        # Each process would keep its own portal state: a browser whose socket reaches
        # another process than before would meet a fresh state, what it had loaded gone.
        raise click.ClickException(
            f"--workers {workers} needs REDIS_URL: without it each process keeps its own "
            "portal state; set REDIS_URL=redis://host:6379/0 or serve with --workers 1"
        )
    env = {
        **os.environ,
        **_project_tools(os.environ.get("PATH", "")),
        "REFLEX_TELEMETRY_ENABLED": "false",
        # Reflex serves its production backend with Granian; with Redis it would start
        # 2 × cores + 1 processes of its own accord, so the count is always ours.
        "REFLEX_USE_GRANIAN": "true",
        "GRANIAN_WORKERS": str(workers),
    }
    args = [
        sys.executable,
        "-m",
        "reflex",
        "run",
        "--env",
        "prod",
        "--single-port",
        "--backend-port",
        str(port),
        "--backend-host",
        host,
    ]
    # The processes Reflex starts answer /readyz with 503 while this file exists: this
    # process writes it on SIGTERM and stops them QUESTWALL_DRAIN_SECONDS later.
    settings = get_settings()
    _forget_drain_files(settings.data_dir)
    drain_file = settings.data_dir / f"serve-{os.getpid()}.draining"
    env[DRAIN_FILE_VARIABLE] = str(drain_file)
    os.chdir(PROJECT_ROOT)
    try:
        with _metrics_directory():
            env["PROMETHEUS_MULTIPROC_DIR"] = os.environ["PROMETHEUS_MULTIPROC_DIR"]
            code = _run_reflex(args, env, drain_file, settings.drain_seconds)
    finally:
        drain_file.unlink(missing_ok=True)
    sys.exit(code)


def _forget_drain_files(data_dir: Path) -> None:
    """Remove the drain files of `questwall serve` processes that are gone (one killed
    while it drained leaves its file behind)."""
    for found in data_dir.glob("serve-*.draining"):
        if _gone(found.name.split("-")[1].split(".")[0]):
            found.unlink(missing_ok=True)


def _gone(pid: str) -> bool:
    """Whether no process has this id (a name's pid part that is no number: gone too)."""
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return True
    except PermissionError:  # another user's live process
        return False
    return False


# Reflex's advice after it prepares the portal's build directory, which names a command
# this project does not use (`questwall serve` is the command).
_MISLEADING = "reflex run` to start the app"


def _run_reflex(args: list[str], env: dict[str, str], drain_file: Path, drain: float) -> int:
    """Run Reflex's production server, passing its output on without the misleading line.

    Ctrl-C reaches Reflex directly (it shares the terminal's process group), so this process
    only waits. A SIGTERM sent to this process alone (a service manager) drains: the
    servers' /readyz answers 503 (`drain_file`) while they go on serving for `drain`
    seconds; then the SIGTERM is passed on. A second SIGTERM passes it on at once."""
    import signal
    import subprocess
    import threading

    reflex = subprocess.Popen(  # noqa: S603
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )

    def on_sigterm(*_: object) -> None:
        if drain_file.exists() or drain <= 0:
            reflex.terminate()
            return
        drain_file.parent.mkdir(parents=True, exist_ok=True)
        drain_file.touch()
        click.echo(f"SIGTERM: draining for {drain:g} s before stopping")
        threading.Timer(drain, reflex.terminate).start()

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, on_sigterm)
    assert reflex.stdout is not None
    for line in reflex.stdout:
        if _MISLEADING not in line:
            sys.stdout.write(line)
            sys.stdout.flush()
    return reflex.wait()


def _project_tools(path: str) -> dict[str, str]:
    """Node.js 22 and bun as `make install` put them (.tools/, from the npm registry), first
    on PATH, so the portal's build finds them when `questwall serve` runs on its own:
    Reflex would otherwise try to download bun, which fails without internet."""
    tools = PROJECT_ROOT / ".tools" / "node_modules" / ".bin"
    if not (tools / "bun").exists():
        return {}
    return {"PATH": f"{tools}{os.pathsep}{path}", "REFLEX_USE_SYSTEM_BUN": "true"}


@click.command("api")
@click.option("--port", default=8001, show_default=True, type=int)
@click.option("--host", default="0.0.0.0", show_default=True)  # noqa: S104
@click.option("--workers", default=2, show_default=True, type=int, help="Worker processes.")
def api_cmd(port: int, host: str, workers: int) -> None:
    """Serve the API alone with N worker processes (for scale, against PostgreSQL; with
    REDIS_URL they share one rate limit per client id, else each process has its own)."""
    import uvicorn

    _require_ready_to_serve()
    settings = get_settings()
    configure_logging(settings.resolved_log_format, settings.log_level)
    with _metrics_directory():
        # uvicorn's lines go through our handler (log_config=None), and each request's
        # line is ours (api/ops/logs.py), which names the route, never the query.
        uvicorn.run(
            "api.asgi:app",
            host=host,
            port=port,
            workers=workers,
            log_config=None,
            log_level=settings.log_level.lower(),
            access_log=False,
            proxy_headers=False,
        )


_METRICS_PREFIX = "questwall-metrics-"


@contextmanager
def _metrics_directory() -> Iterator[None]:
    """The empty directory the server processes started from here count their metrics
    into (PROMETHEUS_MULTIPROC_DIR: the operator's, emptied, else a temporary one, removed
    at the end), so a scrape of any of them counts them all."""
    import shutil
    import tempfile

    from api.ops import fresh_metrics_directory

    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    temporary = Path(tempfile.gettempdir())
    if not given:
        # uvicorn ends a process stopped by SIGTERM with that signal once its requests are
        # done, before the `finally` below: the directories of gone processes go here.
        for found in temporary.glob(f"{_METRICS_PREFIX}*"):
            if found.is_dir() and _gone(found.name.removeprefix(_METRICS_PREFIX)):
                shutil.rmtree(found, ignore_errors=True)
    path = Path(given) if given else temporary / f"{_METRICS_PREFIX}{os.getpid()}"
    fresh_metrics_directory(path)
    try:
        yield
    finally:
        if not given:
            shutil.rmtree(path, ignore_errors=True)
