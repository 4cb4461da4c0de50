"""Health probes: is the process alive (`/livez`), and may it take traffic (`/readyz`).

The outermost ASGI app answers them (`with_probes`), before anything else runs: a load
balancer's or Kubernetes' probe costs no session, no log line and no metric, and still
answers while the rest of the app is busy.

- `/livez`: 200 while the process runs. It checks no dependency: a database outage must
  not make an orchestrator restart every process at once.
- `/readyz`: 200 when this process can serve: the database answers `SELECT 1` within a
  second, its schema is at the migrations' head, Redis answers when `REDIS_URL` is set,
  and the process is not draining. Otherwise 503, with the same document naming each
  failing check and why.

Draining: on SIGTERM a serving process answers `/readyz` with 503 at once, goes on serving
for `QUESTWALL_DRAIN_SECONDS` (a load balancer's probes see it go and send it nothing
new), then stops as before: it takes no new connection and finishes the requests it has.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from api.core.db import schema_heads
from api.core.net import parse_networks

log = logging.getLogger(__name__)

LIVEZ = "/livez"
READYZ = "/readyz"
PROBE_PATHS = (LIVEZ, READYZ)
CHECK_SECONDS = 1.0  # a dependency slower than this is not ready

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# A process drains once: from its first SIGTERM on, until it exits.
DRAINING = threading.Event()
# `questwall serve` names a file here for the server processes it starts: while it exists
# they drain (the SIGTERM reaches `questwall serve`, not them).
DRAIN_FILE_VARIABLE = "QUESTWALL_DRAIN_FILE"


class Readiness:
    """The checks of `/readyz`, each given `timeout` seconds. A check still waiting from an
    earlier probe (a database that does not answer) is not started again: the probe says
    so instead of piling threads up."""

    def __init__(
        self,
        engine: Engine,
        *,
        redis_url: str = "",
        timeout: float = CHECK_SECONDS,
        draining: threading.Event = DRAINING,
        drain_file: str | None = None,
    ):
        self._engine = engine
        self._redis = redis_client(redis_url, timeout) if redis_url else None
        self._timeout = timeout
        self._draining = draining
        self._drain_file = Path(drain_file) if drain_file else None
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="readyz")
        self._running: dict[str, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def report(self) -> tuple[bool, dict[str, Any]]:
        """(ready, the document `/readyz` answers)."""
        started = {"database": self._start("database", self._database)}
        if self._redis is not None:
            started["redis"] = self._start("redis", self._ping_redis)
        checks: dict[str, dict[str, str]] = {}
        for name, future in started.items():
            try:
                found = future.result(timeout=self._timeout)
            except FutureTimeout:
                found = {name: _failed(f"no answer within {self._timeout:g} s")}
            except Exception as exc:  # the check's own failure is its answer
                found = {name: _failed(reason_of(exc))}
            checks.update(found)
        if "schema" not in checks:  # the database did not answer: the schema is unknown
            checks["schema"] = _failed("the database did not answer")
        checks["draining"] = (
            _failed("the process is stopping (SIGTERM)") if self.draining() else _OK
        )
        ready = all(check["status"] == "ok" for check in checks.values())
        return ready, {"status": "ok" if ready else "fail", "checks": checks}

    def draining(self) -> bool:
        return self._draining.is_set() or bool(self._drain_file and self._drain_file.exists())

    def _start(
        self, name: str, check: Callable[[], dict[str, dict[str, str]]]
    ) -> Future[dict[str, Any]]:
        with self._lock:
            running = self._running.get(name)
            if running is not None and not running.done():
                return _done({name: _failed("an earlier check is still waiting for an answer")})
            future = self._running[name] = self._pool.submit(check)
            return future

    def _database(self) -> dict[str, dict[str, str]]:
        with self._engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
            current, heads = schema_revisions(conn)
        if current == heads:
            schema = _OK
        else:
            schema = _failed(
                f"the database is at {', '.join(sorted(current)) or 'no migration'}, "
                f"the code at {', '.join(sorted(heads))}: run `questwall migrate`"
            )
        return {"database": _OK, "schema": schema}

    def _ping_redis(self) -> dict[str, dict[str, str]]:
        assert self._redis is not None
        self._redis.ping()
        return {"redis": _OK}


def schema_revisions(conn: Connection) -> tuple[set[str], set[str]]:
    """(the database's current Alembic revisions, the code's heads): equal when the
    schema is at the migrations' head."""
    from alembic.runtime.migration import MigrationContext

    return set(MigrationContext.configure(conn).get_current_heads()), schema_heads()


_OK = {"status": "ok"}


def _failed(why: str) -> dict[str, str]:
    return {"status": "fail", "error": why}


def reason_of(exc: BaseException) -> str:
    """The first line of an error, under its type's name; never a URL's password (the
    drivers' messages name host and port, not credentials)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__


def _done(value: dict[str, Any]) -> Future[dict[str, Any]]:
    future: Future[dict[str, Any]] = Future()
    future.set_result(value)
    return future


def redis_client(url: str, timeout: float) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)


def with_probes(
    app: ASGIApp, readiness: Readiness, *, drain_seconds: float = 0, detail_allow: str = ""
) -> ASGIApp:
    """`app` behind the probes; its lifespan start also sets SIGTERM to drain first
    (`drain_on_sigterm`), once the server has put its own handler in place. A failing
    check's error (a host, a port, an error's type) is shown to the addresses in
    `detail_allow` (METRICS_ALLOW) alone; any other caller sees each check's status."""
    import anyio.to_thread

    trusted = parse_networks(detail_allow)

    async def probed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in PROBE_PATHS:
            if scope["path"] == LIVEZ:
                await _answer(send, scope, 200, {"status": "ok"})
            else:
                ready, document = await anyio.to_thread.run_sync(readiness.report)
                if not client_in(scope, trusted):
                    document["checks"] = {
                        name: {"status": check["status"]}
                        for name, check in document["checks"].items()
                    }
                await _answer(send, scope, 200 if ready else 503, document)
            return
        if scope["type"] == "lifespan":

            async def starting() -> Message:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    drain_on_sigterm(drain_seconds)
                return message

            await app(scope, starting, send)
            return
        await app(scope, receive, send)

    return probed


def client_in(scope: Scope, networks: Iterable[Any]) -> bool:
    """Whether the request comes from an address in `networks` (the socket's peer)."""
    client = scope.get("client")
    if not client:
        return False
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return False
    return any(address in network for network in networks)


async def _answer(send: Send, scope: Scope, status: int, document: dict[str, Any]) -> None:
    body = json.dumps(document).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def drain_on_sigterm(seconds: float) -> None:
    """From now on SIGTERM marks the process draining (`/readyz` answers 503), and after
    `seconds` does what it did before (the server's own graceful stop). A second SIGTERM
    stops at once. Only the main thread may set a signal handler; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)

    def stop_as_before(signum: int, frame: Any) -> None:
        if callable(previous):
            previous(signum, frame)
        else:  # no server's handler: end as SIGTERM's default would (a timer cannot reset it)
            os._exit(128 + signal.SIGTERM)

    def drain(signum: int, frame: Any) -> None:
        if DRAINING.is_set() or seconds <= 0:
            DRAINING.set()
            stop_as_before(signum, frame)
            return
        DRAINING.set()
        log.info("SIGTERM: draining for %g s before stopping", seconds)
        timer = threading.Timer(seconds, stop_as_before, args=(signum, frame))
        timer.daemon = True
        timer.start()

    signal.signal(signal.SIGTERM, drain)
