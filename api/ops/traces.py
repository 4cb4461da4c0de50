"""Traces: OpenTelemetry spans over OTLP, off unless the standard variables ask for them
(docs/operations.md#traces).

On when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set
(and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`); the exporter reads
the other `OTEL_*` variables itself (headers, timeout, `OTEL_SERVICE_NAME`, sampling).
Each serving process starts its own exporter when its app is built, which is after the
server forked it: an exporter's thread does not survive a fork.

Spans: each API request, named by its route's template, with its dependencies and
endpoint (FastAPI makes these itself once a tracer provider is set), each SQL statement
(its text, never its parameters), and each delivery attempt of a postback or webhook,
whose parent is the request that made the message: its W3C `traceparent`, kept on the
outbox row, joins the attempts, minutes or hours later and in another process, to that
request's trace. An attempt's span names its outcome and status, not its URL (a
receiver's URL may carry its own tokens). Off, none of this is imported and each call
below is a test of one flag.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine

from api.ops.logs import current_request_id, request_context

log = logging.getLogger(__name__)

_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_on = False


def wanted(environ: Any = os.environ) -> bool:
    """Whether the environment asks for traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(environ.get(name, "").strip() for name in _ENDPOINTS)


def start_tracing(engine: Engine | None) -> bool:
    """Export this process's spans when the environment asks (once per process); SQL
    spans for `engine`. Returns whether traces are on."""
    global _on
    if _on or not wanted():
        return _on
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "questwall"}).merge(OTELResourceDetector().detect())
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    if engine is not None:
        # The instrumentation declares SQLAlchemy < 2.1; the engine events it uses are the
        # same in 2.1 (tests/api/ops/test_traces.py sees the statements' spans).
        SQLAlchemyInstrumentor().instrument(
            engine=engine, tracer_provider=provider, skip_dep_check=True
        )
    _on = True
    log.info("traces on: spans go to the OTLP endpoint the OTEL_* variables name")
    return True


def stop_tracing() -> None:
    """Send the spans still buffered (at the end of a process, once)."""
    global _on
    if _on:
        from opentelemetry import trace

        _on = False
        provider: Any = trace.get_tracer_provider()
        provider.shutdown()


def current_traceparent() -> str | None:
    """The W3C trace context of the span under way, to store with an outbox message;
    None when traces are off or no span is under way."""
    if not _on:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    found = carrier.get("traceparent")
    return found if found and len(found) <= 64 else None


@contextmanager
def delivery_span(kind: str, traceparent: str | None) -> Iterator[None]:
    """A span for one delivery attempt of a `kind` message, in the trace of the request
    that made it (`traceparent`; a new trace when there is none)."""
    if not _on:
        yield
        return
    from opentelemetry import context, trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = (
        TraceContextTextMapPropagator().extract({"traceparent": traceparent})
        if traceparent
        else context.Context()
    )
    tracer = trace.get_tracer("questwall")
    with tracer.start_as_current_span(
        f"deliver {kind}", context=parent, kind=trace.SpanKind.CLIENT
    ) as span:
        span.set_attribute("questwall.outbox", kind)
        yield


def note_attempt(outcome: str, status_code: int | None) -> None:
    """The delivery attempt under way ended so (on its span)."""
    if _on:
        from opentelemetry import trace

        span = trace.get_current_span()
        span.set_attribute("questwall.outcome", outcome)
        if status_code is not None:
            span.set_attribute("http.response.status_code", status_code)


@contextmanager
def delivering(kind: str, request_id: str | None, traceparent: str | None) -> Iterator[None]:
    """One delivery attempt of a `kind` message that the request `request_id` made: its
    log lines carry that id, and its span joins that request's trace."""
    with request_context(request_id), delivery_span(kind, traceparent):
        yield


def made_by() -> dict[str, str | None]:
    """The columns an outbox message keeps of the request whose transaction makes it:
    `request_id` and `traceparent` (None outside a request, or with traces off)."""
    return {"request_id": current_request_id(), "traceparent": current_traceparent()}
