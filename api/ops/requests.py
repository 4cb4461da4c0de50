"""The ASGI wrapper that observes each HTTP request: its id (`X-Request-ID`), its count
and duration by route template, its log line; and `GET /metrics` (docs/operations.md#metrics).

Requests are tallied in this process's memory and moved into the Prometheus series once a
second and before this process answers a scrape: a request costs a few additions instead
of five locked writes to shared memory (bench/observability.py). What another process
shows is at most a second old.
"""

from __future__ import annotations

import atexit
import bisect
import logging
import os
import threading
import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST

from api.core.net import parse_networks
from api.ops.logs import (
    REQUEST_ID_HEADER,
    enter_request,
    leave_request,
    log_request,
    request_id_from,
    write_request_lines,
)
from api.ops.metrics import (
    HTTP_DURATION,
    HTTP_IN_FLIGHT,
    HTTP_REQUESTS,
    METRICS_PATH,
    OTHER_ROUTE,
    exposition,
)
from api.ops.probes import ASGIApp, Message, Receive, Scope, Send, client_in
from api.ops.traces import stop_tracing

log = logging.getLogger(__name__)


class RouteTemplates:
    """The route templates of a FastAPI app, the closed set of `route` labels, and which
    of them answered a request: its scope names the endpoint that ran (several templates
    may share one endpoint: then the one that matches the path)."""

    def __init__(self, app: Any):
        from fastapi.routing import iter_route_contexts
        from starlette.routing import compile_path

        self._by_endpoint: dict[Any, list[tuple[str, Any]]] = {}
        for context in iter_route_contexts(app.routes):
            path, endpoint = context.path, getattr(context, "endpoint", None)
            if isinstance(path, str) and endpoint is not None:
                pattern = compile_path(path)[0]
                self._by_endpoint.setdefault(endpoint, []).append((path, pattern))

    def of(self, scope: Scope) -> str:
        routes = self._by_endpoint.get(scope.get("endpoint"))
        if not routes:
            return OTHER_ROUTE
        if len(routes) == 1:
            return routes[0][0]
        for path, pattern in routes:
            if pattern.match(scope["path"]):
                return path
        return OTHER_ROUTE


def route_templates(app: Any) -> RouteTemplates:
    return RouteTemplates(app)


def with_metrics(app: ASGIApp, *, routes: RouteTemplates | None, allow: str) -> ASGIApp:
    """`app` observed: each HTTP request gets its id (`X-Request-ID`, echoed in the
    answer), is counted by its route template (one of `routes`, else "other"), method
    and status, and logged in one line (api/ops/logs.py); `GET /metrics` is answered to
    the addresses in `allow` (a comma-separated list of networks; others get 404, as if
    it were not there).

    Requests are tallied in this process's memory and moved into the metrics (and their
    lines written) once a second and before this process answers a scrape: a request
    costs a few additions instead of five locked writes to shared memory. What another
    process shows is at most a second old."""
    allowed = parse_networks(allow)

    async def counted(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            try:
                await app(scope, receive, send)
            finally:
                if scope["type"] == "lifespan":  # the server stops: its last second too
                    _TALLY.flush()
                    stop_tracing()
            return
        if scope["path"] == METRICS_PATH:
            await _metrics_answer(scope, send, client_in(scope, allowed))
            return
        started = time.perf_counter()
        status = 500  # an app that raised before answering
        request_id = request_id_from(scope["headers"])
        echoed = (REQUEST_ID_HEADER, request_id.encode())
        tally = _TALLY
        tally.in_flight += 1
        if started - tally._flushed_at >= FLUSH_EVERY:
            tally.flush()  # the in-flight gauge too, while earlier requests hang

        async def noting(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), echoed]
            await send(message)

        entered = enter_request(request_id)
        try:
            await app(scope, receive, noting)
        finally:
            ended = time.perf_counter()
            tally.in_flight -= 1
            label = routes.of(scope) if routes is not None else OTHER_ROUTE
            method = _method(scope)
            tally.add(label, method, status, ended - started)
            log_request(method, label, status, ended - started)
            leave_request(entered)
            tally.flush_soon(ended)

    return counted


FLUSH_EVERY = 1.0  # seconds between two moves of the tallies into the metrics


class _Tally:
    """This process's requests since the last flush, by (route, method, status): how
    many, their summed duration and how many fell in each of the duration histogram's
    buckets. Only the serving loop adds; a flush swaps the dict under the lock."""

    def __init__(self) -> None:
        self.in_flight = 0
        self._counts: dict[tuple[str, str, int], list[float]] = {}
        self._bounds = tuple(HTTP_DURATION._upper_bounds)  # ends with +Inf
        self._lock = threading.Lock()
        self._flushed_at = time.perf_counter()
        self._timer: Any = None  # the loop's handle that flushes what is left

    def add(self, route: str, method: str, status: int, seconds: float) -> None:
        bucket = bisect.bisect_left(self._bounds, seconds)  # the first bound >= seconds
        with self._lock:
            found = self._counts.get((route, method, status))
            if found is None:
                found = self._counts[(route, method, status)] = [0.0] * (len(self._bounds) + 1)
            found[0] += seconds
            found[bucket + 1] += 1

    def flush_soon(self, now: float) -> None:
        """Flush when a second has passed; else make sure this loop flushes within one
        (a timer of a loop that is gone, or another loop's, is replaced)."""
        if now - self._flushed_at >= FLUSH_EVERY:
            self.flush()
            return
        self._keep_timer()

    def _keep_timer(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        timer = self._timer
        if timer is None or timer[0] is not loop or loop.is_closed() or timer[1].cancelled():
            self._timer = (loop, loop.call_later(FLUSH_EVERY, self._timed))

    def _timed(self) -> None:
        self._timer = None
        self.flush()
        if self.in_flight:  # requests under way (a stuck database): the gauge stays fresh
            self._keep_timer()

    def flush(self) -> None:
        """Move the tallies into the metrics and write the request lines; never raises
        (it runs in a request's `finally` and before a scrape)."""
        with self._lock:
            counts, self._counts = self._counts, {}
            self._flushed_at = time.perf_counter()
        try:
            for (route, method, status), (total, *buckets) in counts.items():
                answered, duration = _children(route, method, status)
                answered.inc(sum(buckets))
                _add_observations(duration, total, buckets)
            HTTP_IN_FLIGHT.set(self.in_flight)
        except Exception:  # a full disk under the shared directory: the counts are lost
            log.exception("the request metrics could not be written")
        write_request_lines()

    def forget(self) -> None:
        """A forked process starts with none of its parent's requests."""
        self.in_flight, self._counts, self._lock = 0, {}, threading.Lock()
        self._timer = None


def _add_observations(histogram: Any, total: float, buckets: list[float]) -> None:
    """Add many observations to a histogram's series at once: their sum, and how many
    fell in each bucket (prometheus-client keeps a bucket's own count, not the running
    total; `observe` does the same one at a time)."""
    histogram._sum.inc(total)
    for value, count in zip(histogram._buckets, buckets, strict=True):
        if count:
            value.inc(count)


_TALLY = _Tally()
atexit.register(_TALLY.flush)
os.register_at_fork(after_in_child=_TALLY.forget)


def flush_observed() -> None:
    """Move this process's request tallies into the metrics and write its request lines
    now (before a scrape; tests)."""
    _TALLY.flush()


_CHILDREN: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def _children(route: str, method: str, status: int) -> tuple[Any, Any]:
    """The request counter's and the duration histogram's series of one kind of request,
    looked up once (`labels()` checks and locks on every call)."""
    key = (route, method, status)
    found = _CHILDREN.get(key)
    if found is None:
        found = _CHILDREN[key] = (
            HTTP_REQUESTS.labels(route=route, method=method, status=str(status)),
            HTTP_DURATION.labels(route=route, method=method),
        )
    return found


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _method(scope: Scope) -> str:
    return scope["method"] if scope["method"] in _METHODS else "OTHER"


async def _metrics_answer(scope: Scope, send: Send, allowed: bool) -> None:
    if not allowed or scope["method"] not in ("GET", "HEAD"):
        body, status, kind = b"Not Found", 404, b"text/plain; charset=utf-8"
    else:
        import anyio.to_thread

        _TALLY.flush()  # this process's last second too
        body, status, kind = await anyio.to_thread.run_sync(exposition), 200, b""
        kind = CONTENT_TYPE_LATEST.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
