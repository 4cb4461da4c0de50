"""Log lines: one JSON object per line (LOG_FORMAT=json, production's default) or text,
each carrying the id of the request it was written for (docs/operations.md#logs).

The id comes from the request's `X-Request-ID` when that is a short token, else it is made
here; every answer echoes it. A postback or webhook message keeps the id of the request
whose transaction made it, and each of its delivery attempts logs under that id, so one
search finds a conversion's request and every attempt to tell its publisher.

Nothing secret goes into a line: the request line names the route's template, never the
path or its query, and no header is logged.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

import orjson

REQUEST_ID_HEADER = b"x-request-id"
_REQUEST_ID: ContextVar[str | None] = ContextVar("questwall_request_id", default=None)
# What a caller may name its request: a short token of URL-safe characters. Anything
# else (long, spaces, quotes, control characters) is replaced by an id of our own.
_TOKEN = re.compile(rb"[A-Za-z0-9][A-Za-z0-9._:+=-]{0,63}")

REQUESTS = logging.getLogger("questwall.http")
# A record's own attributes: whatever else it has came from `extra=` and is logged.
# (uvicorn's `color_message` is its message again, with terminal colours.)
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "request_id",
    "color_message",
}


# A request id: this process's random half, then its count of requests (unique without
# a system call per request; an id names a request, it grants nothing).
_PROCESS_HALF = secrets.token_hex(4)
_NUMBERS = itertools.count(1)


def new_request_id() -> str:
    return f"{_PROCESS_HALF}{next(_NUMBERS) & 0xFFFFFFFF:08x}"


def _forked() -> None:
    """A forked server process names its requests apart from its parent's, and writes
    none of the lines its parent kept."""
    global _PROCESS_HALF, _NUMBERS
    _PROCESS_HALF, _NUMBERS = secrets.token_hex(4), itertools.count(1)
    _LINES.forget()


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The request's own `X-Request-ID` when it is a short token, else a new id."""
    for name, value in headers:
        if name == REQUEST_ID_HEADER:
            if _TOKEN.fullmatch(value):
                return value.decode("ascii")
            break
    return new_request_id()


def current_request_id() -> str | None:
    """The id of the request (or delivery) this code runs for; None outside one."""
    return _REQUEST_ID.get()


@contextmanager
def request_context(request_id: str | None) -> Iterator[None]:
    """Log what runs inside under `request_id` (a delivery: its message's request)."""
    token = _REQUEST_ID.set(request_id)
    try:
        yield
    finally:
        _REQUEST_ID.reset(token)


def enter_request(request_id: str) -> Any:
    """The request's id set for what runs in its context (the token resets it)."""
    return _REQUEST_ID.set(request_id)


def leave_request(token: Any) -> None:
    _REQUEST_ID.reset(token)


def log_request(method: str, route: str, status: int, seconds: float) -> None:
    """The request's one line: method, route template, status and duration. Kept with
    the others of this process and written with them (`write_request_lines`, every
    second) when the line goes only to our handler; else handed to logging at once."""
    if not REQUESTS.isEnabledFor(logging.INFO):
        return
    lines = _LINES
    handlers = logging.root.handlers
    if lines.handler is not None and len(handlers) == 1 and handlers[0] is lines.handler:
        lines.add(time.time(), _REQUEST_ID.get(), method, route, status, seconds)
        return
    # Made directly (Logger.handle): `info()` would also walk the stack for the caller.
    record = logging.LogRecord(
        REQUESTS.name, logging.INFO, __file__, 0, "%s %s %d", (method, route, status), None
    )
    record.method, record.route, record.status = method, route, status
    record.duration_ms = round(seconds * 1000, 3)
    REQUESTS.handle(record)


class _RequestLines:
    """The request lines this process has not written yet, made as the handler's
    formatter would make them. One write a second instead of one a request: a request
    line through logging costs more than the request's metrics (bench/observability.py)."""

    def __init__(self) -> None:
        self.handler: logging.StreamHandler[Any] | None = None
        self.json = True
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._kinds: dict[tuple[str, str, int], tuple[str, str]] = {}

    def add(
        self,
        created: float,
        request_id: str | None,
        method: str,
        route: str,
        status: int,
        seconds: float,
    ) -> None:
        duration = round(seconds * 1000, 3)
        if self.json:
            # The line JsonLines would make, from parts: the request's kind once (its JSON
            # made by orjson), then the time, the id (a token of JSON-safe characters) and
            # the duration.
            kind = self._kinds.get((method, route, status))
            if kind is None:
                kind = self._kinds[(method, route, status)] = _json_kind(method, route, status)
            line = (
                f'{{"time":"{_iso(created)}","level":"INFO","logger":"{REQUESTS.name}",'
                f'{kind[0]},"request_id":"{request_id}",{kind[1]},"duration_ms":{duration}}}'
            )
        else:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(created))
            line = (
                f"{stamp},{int(created * 1000) % 1000:03d} INFO {REQUESTS.name} [{request_id}] "
                f"{method} {route} {status} method={method} route={route} status={status} "
                f"duration_ms={duration}"
            )
        with self._lock:
            self._lines.append(line)

    def write(self) -> None:
        """Write the kept lines in chunks of whole lines of at most PIPE_BUF bytes: a
        write that small to a pipe several processes share (`questwall serve`'s, a
        container's) is never cut by another's. A stream that fails loses these lines,
        never the request or the scrape that wrote them."""
        with self._lock:
            lines, self._lines = self._lines, []
        handler = self.handler
        if not lines or handler is None:
            return
        chunk: list[str] = []
        size = 0
        try:
            with handler.lock or threading.Lock():  # the handler's own lock: whole lines
                for line in lines:
                    if chunk and size + len(line) + 1 > _PIPE_BUF:
                        handler.stream.write("".join(chunk))
                        chunk, size = [], 0
                    chunk.append(line + "\n")
                    size += len(line) + 1
                handler.stream.write("".join(chunk))
                handler.stream.flush()
        except Exception:  # a closed or broken stream: logging's own way of saying so
            handler.handleError(
                logging.makeLogRecord({"msg": "request lines", "name": REQUESTS.name})
            )

    def forget(self) -> None:
        """A forked process starts with no lines of its parent's."""
        self._lines = []
        self._lock = threading.Lock()


def _json_kind(method: str, route: str, status: int) -> tuple[str, str]:
    """The JSON of a kind of request's message, and of its method, route and status."""
    message = orjson.dumps({"message": f"{method} {route} {status}"}).decode()[1:-1]
    rest = orjson.dumps({"method": method, "route": route, "status": status}).decode()[1:-1]
    return message, rest


_LINES = _RequestLines()
_PIPE_BUF = 4096  # what POSIX writes to a pipe in one piece


def write_request_lines() -> None:
    """Write the request lines kept so far (every second, at a scrape, at exit)."""
    _LINES.write()


atexit.register(write_request_lines)
os.register_at_fork(after_in_child=_forked)


_SECOND: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def _iso(created: float) -> str:
    """`created` in ISO 8601, UTC, to the millisecond (each second formatted once; the
    pair is read and replaced whole, so threads never mix two seconds)."""
    global _SECOND
    second = int(created)
    cached = _SECOND
    if cached[0] != second:
        cached = _SECOND = (
            second,
            datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S"),
        )
    return f"{cached[1]}.{int((created - second) * 1000):03d}+00:00"


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class JsonLines(logging.Formatter):
    """time, level, logger, message, request_id, the record's `extra` fields, and the
    exception's traceback when there is one. (orjson: a line costs a third of what a
    general JSON formatter does, which matters on the request path.)"""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _iso(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (request_id := _REQUEST_ID.get()) is not None:
            line["request_id"] = request_id
        line.update(_fields(record))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


class TextLines(logging.Formatter):
    """`time level logger [request id] message key=value ...`, for a terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(request)s %(message)s")
        self.converter = time.gmtime  # in UTC, like the JSON lines' times

    def format(self, record: logging.LogRecord) -> str:
        request_id = _REQUEST_ID.get()
        record.request = f" [{request_id}]" if request_id else ""
        try:
            text = super().format(record)
        finally:
            delattr(record, "request")
        fields = _fields(record)
        if fields:
            text += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        return text


_MARK = "_questwall"
# Libraries whose own lines would carry what must not be logged, at any LOG_LEVEL: URLs
# with their queries (httpx), SQL parameters (SQLAlchemy at INFO and below), an SMTP
# conversation with its AUTH line. Their warnings and errors still come through.
_QUIET = ("httpx", "httpcore", "sqlalchemy", "aiosmtplib", "urllib3", "python_multipart")


def configure_logging(
    log_format: str, level: str = "INFO", *, stream: IO[str] | None = None
) -> logging.Handler:
    """Send every log line of this process through one handler in `log_format` (json or
    text) at `level`: ours, the servers' (uvicorn, granian) and the libraries'. uvicorn's
    access log is off: the request line above replaces it. Called again, it replaces the
    handler it set before."""
    handler = logging.StreamHandler(stream or sys.stderr)
    setattr(handler, _MARK, True)
    handler.setFormatter(JsonLines() if log_format == "json" else TextLines())
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    _LINES.write()  # what the handler before was given
    _LINES.handler, _LINES.json = handler, log_format == "json"
    for name in ("uvicorn", "uvicorn.error", "_granian", "granian"):
        server = logging.getLogger(name)
        server.handlers.clear()
        server.propagate = True
    for name in _QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    access.propagate = False
    access.disabled = True
    return handler
