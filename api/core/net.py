"""The client's IP address, believing X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=16)
def parse_networks(spec: str) -> tuple[Network, ...]:
    """'10.0.0.0/8, 127.0.0.1' → networks; a bad entry is a configuration error."""
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False) for part in spec.split(",") if part.strip()
    )


def _trusted(ip: str, networks: tuple[Network, ...]) -> bool:
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(address in net for net in networks)


def client_ip(peer: str, forwarded_for: str | None, trusted: tuple[Network, ...]) -> str:
    """The socket's peer, unless it is a trusted proxy: then the right-most address of
    X-Forwarded-For that is not itself a trusted proxy."""
    if not trusted or not forwarded_for or not _trusted(peer, trusted):
        return peer
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()]
    for hop in reversed(hops):
        if not _trusted(hop, trusted):
            try:
                return str(ipaddress.ip_address(hop))
            except ValueError:
                return peer  # a forged, malformed entry: fall back to what we know
    return hops[0] if hops else peer
