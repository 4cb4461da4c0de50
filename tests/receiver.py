"""A real HTTP receiver on 127.0.0.1 for postback tests: records what it gets, answers as told."""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit


class Receiver:
    def __init__(self) -> None:
        self.requests: list[str] = []  # path + query, as received
        self.clients: list[str] = []  # the address each request came from
        self.hosts: list[str] = []  # the Host header of each request
        self.signatures: list[str] = []  # the Questwall-Signature header of each request
        self.posts: list[bytes] = []  # the bodies of POST requests (alert webhooks)
        self.post_headers: list[dict[str, str]] = []  # the headers of each POST
        self.post_statuses: list[int] = []  # answers to POSTs, in order; then 204
        self.post_replies: list[bytes] = []  # the bodies of those answers, in order; then none
        self.post_answers: list[int] = []  # the answer each POST got
        self.statuses: list[int] = []  # answers to give, in order; then 200
        self.hang_seconds = 0.0
        self.drip_seconds = 0.0  # when set, the body comes one byte at a time, this far apart
        self.lock = threading.Lock()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def queries(self) -> list[list[tuple[str, str]]]:
        return [parse_qsl(urlsplit(r).query, keep_blank_values=True) for r in self.requests]


@contextmanager
def running_receiver(
    port: int = 0, receiver: Receiver | None = None, tls: ssl.SSLContext | None = None
) -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 (HTTPS with the server context `tls`), stopped on exit."""
    receiver = receiver or Receiver()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real receivers do
        # Headers and body are two writes: without TCP_NODELAY the body waits for the
        # sender's delayed ACK (40 ms), which real servers do not make every request pay.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            with receiver.lock:
                receiver.requests.append(self.path)
                receiver.clients.append(self.client_address[0])
                receiver.hosts.append(self.headers.get("Host", ""))
                receiver.signatures.append(self.headers.get("Questwall-Signature", ""))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
            if receiver.hang_seconds:
                time.sleep(receiver.hang_seconds)
            body = b"ok" if status < 300 else b"try again"
            if receiver.drip_seconds:
                body = b"ok" * 20
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                step = 1 if receiver.drip_seconds else len(body)
                for i in range(0, len(body), step):
                    self.wfile.write(body[i : i + step])
                    time.sleep(receiver.drip_seconds)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the sender gave up waiting (its timeout)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.posts.append(body)
                receiver.post_headers.append({k.lower(): v for k, v in self.headers.items()})
                status = receiver.post_statuses.pop(0) if receiver.post_statuses else 204
                reply = receiver.post_replies.pop(0) if receiver.post_replies else b""
                receiver.post_answers.append(status)
            if receiver.hang_seconds:
                time.sleep(receiver.hang_seconds)
            self.send_response(status)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256  # many dispatcher threads connect at once
        daemon_threads = True

    server = Server(("127.0.0.1", port), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
