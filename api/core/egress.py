"""Outbound HTTP that only reaches public addresses, checked at connect time.

Checking a URL's host and then letting the HTTP client resolve it again leaves a gap: a
name can answer a public address to the check and 127.0.0.1 to the connect (DNS
rebinding). `GuardedBackend` closes it inside the connection itself: every new connection
resolves the host once, refuses it when any answer is not public, and connects to exactly
the addresses it checked. The URL is left as it is, so the `Host` header and the TLS server
name still come from it. Connections kept alive by the pool were made by this check, so
reusing one never reaches an address that was not checked.

httpcore's `NetworkBackend` is the documented place for this; the HTTP client above it
(httpx) stays unchanged.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import threading
import time
import typing
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port → the addresses to connect to, in order (strings, as getaddrinfo gives them).
Resolver = Callable[[str, int], list[str]]

# IPv6 prefixes whose last 32 bits are an IPv4 address that the network may reach: NAT64
# (well-known and local-use prefixes) and the deprecated IPv4-compatible form (::a.b.c.d).
_NAT64 = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class TargetRefused(httpcore.ConnectError):
    """The host resolves to an address postbacks must not reach; nothing was sent.

    A `ConnectError` for httpx, which reports it as `httpx.ConnectError` with this one as
    its cause."""


def system_resolver(host: str, port: int) -> list[str]:
    """The system resolver's TCP addresses for host, without duplicates, in its order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"the host does not resolve: {exc}") from exc
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 spelling carries (mapped, compatible, NAT64, 6to4,
    Teredo server and client); none for an IPv4 address or a plain IPv6 one."""
    if isinstance(address, ipaddress.IPv4Address):
        return []
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _IPV4_COMPATIBLE or any(address in net for net in _NAT64):
        found.append(low32)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _public(address: IPAddress) -> bool:
    return address.is_global and not address.is_multicast


def address_problem(address: IPAddress) -> str | None:
    """Why an address is not a public one (itself, or an IPv4 address it embeds), or None."""
    # The embedded address first: some of these spellings count as global themselves.
    for inner in embedded_ipv4(address):
        if not _public(inner):
            return f"{address}, which carries {inner}, not a public address"
    if not _public(address):
        return f"{address}, which is not a public address"
    return None


def parse_address(text: str) -> IPAddress | None:
    """The address a host names literally (brackets and IPv6 zone allowed), or None."""
    try:
        return ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


_deadline = threading.local()


@contextmanager
def total_timeout(seconds: float | None) -> Iterator[None]:
    """Bound the requests this thread makes inside the block to `seconds` in all (None:
    no bound).

    httpx's timeouts bound each connect, read and write, so a receiver that answers one
    byte at a time could hold a request (and its postback's lease) for ever; connections
    made by `GuardedBackend` cut every wait at this deadline."""
    _deadline.at = None if seconds is None else time.monotonic() + seconds
    try:
        yield
    finally:
        _deadline.at = None


def _bounded(timeout: float | None, expired: type[Exception]) -> float | None:
    """The timeout of one network wait, shortened to what is left of the deadline."""
    at = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the request took longer than its total timeout")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    """A connection whose every wait ends at the thread's deadline (`total_timeout`)."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, httpcore.ConnectTimeout)
        return _BoundedStream(self.stream.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> typing.Any:
        return self.stream.get_extra_info(info)


class GuardedBackend(httpcore.NetworkBackend):
    """Resolves once per connection, checks every answer, connects to a checked one.

    `allow_private` skips the check (closed networks, tests) but still connects to the
    addresses resolved here. `resolver` defaults to the system resolver; tests inject one.
    `inner` makes the TCP connections (httpcore's own by default)."""

    def __init__(
        self,
        *,
        allow_private: bool,
        resolver: Resolver | None = None,
        inner: httpcore.NetworkBackend | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.resolver = resolver or system_resolver
        self.inner = inner or httpcore.SyncBackend()

    def checked_addresses(self, host: str, port: int) -> list[str]:
        """The addresses this connection may use; TargetRefused if any is not public."""
        literal = parse_address(host)
        answers = [str(literal)] if literal is not None else self.resolver(host, port)
        if not answers:
            raise httpcore.ConnectError(f"the host does not resolve: {host}")
        if self.allow_private:
            return answers
        for answer in answers:
            address = parse_address(answer)
            problem = "an unreadable address" if address is None else address_problem(address)
            if problem is not None:
                raise TargetRefused(f"{host} resolves to {problem}")
        return answers

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        last: Exception | None = None
        for address in self.checked_addresses(host, port):
            try:
                stream = self.inner.connect_tcp(
                    address,
                    port,
                    timeout=_bounded(timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
                return _BoundedStream(stream)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc  # try the next checked address, as the system would
        assert last is not None  # checked_addresses never returns an empty list
        raise last

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise TargetRefused("unix sockets are not a postback target")

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


@functools.cache
def trusted_authorities() -> ssl.SSLContext:
    """The TLS context that verifies servers against the trusted certificate authorities,
    built once per process: loading the authorities costs about 0.1 s of CPU, which every
    client (an alert sender's round, a trial delivery) paid twice, and one context serves
    any number of connections and threads."""
    return httpx.create_ssl_context()


def guarded_transport(
    *,
    allow_private: bool,
    resolver: Resolver | None = None,
    inner: httpcore.NetworkBackend | None = None,
    local_address: str | None = None,
    max_connections: int = 32,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.HTTPTransport:
    """An httpx transport whose every connection goes through `GuardedBackend`: TLS verified
    against the trusted certificate authorities (or `ssl_context`), no retries, optional
    source address. (A client given a transport uses
    no proxy from the environment, which would bypass the check.)"""
    context = ssl_context or trusted_authorities()
    transport = httpx.HTTPTransport(verify=context)
    # httpx builds its httpcore pool without a way to pass a network backend, so the pool
    # is replaced by one built with the same settings and ours.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=context,
        max_connections=max_connections,
        max_keepalive_connections=max_connections,
        local_address=local_address,
        retries=0,
        network_backend=GuardedBackend(allow_private=allow_private, resolver=resolver, inner=inner),
    )
    return transport


def refusal(exc: BaseException) -> str | None:
    """The reason when an httpx error is a refused target, else None."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, TargetRefused):
            return str(current)
        current = current.__cause__ or current.__context__
    return None
