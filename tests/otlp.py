"""A real OTLP/HTTP trace receiver on 127.0.0.1: it takes what an exporter posts to
/v1/traces (protobuf, gzip or not), decodes it with OpenTelemetry's own messages and
keeps each span."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class Span:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, str]


class Collector:
    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()
        self.port = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        found = []
        for resource in request.resource_spans:
            service = next(
                (
                    a.value.string_value
                    for a in resource.resource.attributes
                    if a.key == "service.name"
                ),
                "",
            )
            for scope in resource.scope_spans:
                for span in scope.spans:
                    found.append(
                        Span(
                            service=service,
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_id=span.parent_span_id.hex(),
                            kind=span.kind,
                            attributes={a.key: _value(a.value) for a in span.attributes},
                        )
                    )
        with self.lock:
            self.spans.extend(found)

    def named(self, name: str) -> list[Span]:
        with self.lock:
            return [s for s in self.spans if s.name == name]


def _value(value: object) -> str:
    """An attribute's value as text: strings in quotes, numbers bare."""
    text = str(value).strip()  # e.g. `string_value: "GET"` or `int_value: 200`
    return text.split(": ", 1)[1] if ": " in text else text


@contextmanager
def running_collector() -> Iterator[Collector]:
    collector = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_response(404)
                self.end_headers()
                return
            collector.take(body)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    collector.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        server.shutdown()
        server.server_close()
