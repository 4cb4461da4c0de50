"""Postbacks reach only the addresses that were checked (DNS rebinding, IPv4 hidden in IPv6),
against real local receivers."""

from __future__ import annotations

import httpcore
import pytest

from api.core.config import Settings
from api.core.db import write_session
from api.core.egress import GuardedBackend, TargetRefused
from api.postbacks import transport
from tests.factories import make_offerwall
from tests.receiver import running_receiver

# A public address (it is in no reserved range) that stands for the publisher's server.
PUBLIC = "93.184.215.14"


def _settings(*, allow_private: bool) -> Settings:
    return Settings(POSTBACK_ALLOW_PRIVATE=allow_private).model_copy(
        update={"postback_connect_timeout": 1.0, "postback_total_timeout": 2.0}
    )


class RebindingResolver:
    """Answers the given addresses in turn, one per call, as a hostile DNS server can."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return [self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]]


class Internet(httpcore.NetworkBackend):
    """Real TCP connections, except that the public address leads to a local receiver that
    plays the publisher's server; records every address it is asked to connect to."""

    def __init__(self, public_port: int) -> None:
        self.public_port = public_port
        self.connected_to: list[str] = []
        self.real = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.connected_to.append(host)
        if host == PUBLIC:
            host, port = "127.0.0.1", self.public_port
        return self.real.connect_tcp(host, port, timeout, local_address, socket_options)


EMBEDDED_LOOPBACK = [
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:127.0.0.1",  # IPv4-mapped
    "64:ff9b::127.0.0.1",  # NAT64, well-known prefix
    "64:ff9b:1::7f00:1",  # NAT64, local-use prefix
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo, client 127.0.0.1
    "::169.254.169.254",  # IPv4-compatible cloud metadata address
]


@pytest.mark.parametrize("address", EMBEDDED_LOOPBACK)
def test_ipv6_spellings_of_a_private_ipv4_address_are_refused(address):
    assert transport.target_problem(f"http://[{address}]:8000/pb", allow_private=False)
    backend = GuardedBackend(allow_private=False, resolver=lambda host, port: [address])
    with pytest.raises(TargetRefused, match="not a public address"):
        backend.checked_addresses("publisher.example", 80)


@pytest.mark.parametrize("address", EMBEDDED_LOOPBACK)
def test_a_literal_embedded_ipv4_url_is_not_sent(address):
    with transport.http_client(_settings(allow_private=False)) as client:
        result = transport.send(client, f"http://[{address}]:8000/pb", allow_private=False)
    assert result.status_code is None and "not a public address" in (result.error or "")
    assert result.duration_ms == 0 and not result.sent  # refused before anything was sent


def test_public_ipv6_and_ipv4_addresses_pass_the_check():
    backend = GuardedBackend(
        allow_private=False, resolver=lambda host, port: [PUBLIC, "2606:4700::1111"]
    )
    assert backend.checked_addresses("publisher.example", 443) == [PUBLIC, "2606:4700::1111"]
    # 6to4 and NAT64 spellings of a public IPv4 address are public too.
    for address in ("2002:5db8:d70e::1", "64:ff9b::5db8:d70e"):
        assert GuardedBackend(
            allow_private=False, resolver=lambda host, port, a=address: [a]
        ).checked_addresses("publisher.example", 80) == [address]


def test_one_private_answer_among_public_ones_refuses_the_host():
    backend = GuardedBackend(allow_private=False, resolver=lambda host, port: [PUBLIC, "10.0.0.5"])
    with pytest.raises(TargetRefused, match=r"10\.0\.0\.5"):
        backend.checked_addresses("publisher.example", 80)


def test_a_name_that_rebinds_to_loopback_only_ever_reaches_the_checked_address():
    """The resolver answers a public address first and 127.0.0.1 afterwards: the request
    goes to the public address it checked, with the URL's Host, and the internal service
    on 127.0.0.1 is never reached."""
    settings = _settings(allow_private=False)
    with running_receiver() as internal, running_receiver() as publisher:
        url = f"http://rebind.example:{internal.port}/pb?tx=1"
        resolver = RebindingResolver(PUBLIC, "127.0.0.1")
        internet = Internet(public_port=publisher.port)
        with transport.http_client(settings, resolver=resolver, network=internet) as client:
            first = transport.send(client, url, allow_private=False)
            # The kept-alive connection still leads to the address that was checked.
            again = transport.send(client, url, allow_private=False)
        assert (first.status_code, again.status_code) == (200, 200)
        assert resolver.calls == 1  # one resolution, for the one connection
        assert internet.connected_to == [PUBLIC]
        # A new connection resolves again, gets 127.0.0.1, and is refused before connecting.
        with transport.http_client(settings, resolver=resolver, network=internet) as client:
            rebound = transport.send(client, url, allow_private=False)
        assert rebound.status_code is None and rebound.duration_ms == 0 and not rebound.sent
        assert (
            rebound.error == "rebind.example resolves to 127.0.0.1, which is not a public address"
        )
        assert internet.connected_to == [PUBLIC]
    assert internal.requests == []
    assert publisher.hosts == [f"rebind.example:{internal.port}"] * 2


def test_allow_private_delivers_over_http_to_a_local_receiver_by_name():
    with running_receiver() as receiver:
        url = f"http://localhost:{receiver.port}/pb?tx=2"
        with transport.http_client(_settings(allow_private=True)) as client:
            result = transport.send(client, url, allow_private=True)
    assert result.status_code == 200 and result.body_excerpt == "ok"
    assert receiver.requests == ["/pb?tx=2"]
    assert receiver.hosts == [f"localhost:{receiver.port}"]


def test_without_allow_private_a_local_name_is_refused_by_the_system_resolver():
    with running_receiver() as receiver:
        url = f"http://localhost:{receiver.port}/pb?tx=3"
        with transport.http_client(_settings(allow_private=False)) as client:
            result = transport.send(client, url, allow_private=False)
    assert result.status_code is None and "not a public address" in (result.error or "")
    assert receiver.requests == []


def test_the_portals_test_postback_is_refused_for_an_embedded_loopback_address(
    engine, box, settings
):
    from api.postbacks import trial
    from api.publishers import offerwalls

    wall = make_offerwall(engine, box)
    strict = settings.model_copy(update={"postback_allow_private": False})
    with running_receiver() as receiver, write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall[0].id)
        url = f"http://[::127.0.0.1]:{receiver.port}/pb?tx={{transaction_id}}"
        offerwalls.set_postback_url(session=session, offerwall=offerwall, url=url)
        result = trial.send_test_postback(settings=strict, box=box, offerwall=offerwall)
    assert result.status_code is None and "not a public address" in result.error
    assert result.latency_ms == 0 and receiver.requests == []


def test_a_receiver_that_answers_a_byte_at_a_time_is_cut_at_the_total_timeout():
    # Each byte comes well within the read timeout; the whole answer would take 8 s.
    settings = _settings(allow_private=True).model_copy(update={"postback_total_timeout": 1.5})
    with running_receiver() as receiver:
        receiver.drip_seconds = 0.2
        with transport.http_client(settings) as client:
            result = transport.send(client, f"{receiver.url}/pb?tx=4", allow_private=True)
    assert result.status_code is None and result.error == "timed out: ReadTimeout"


def _certificate(name: str, directory) -> tuple[str, str]:
    """A self-signed certificate for `name` and its key, as PEM files."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_path), str(key_path)


def test_https_goes_to_the_checked_address_with_the_urls_server_name(tmp_path):
    import ssl

    cert, key = _certificate("publisher.example", tmp_path)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    names: list[str | None] = []
    server.sni_callback = lambda sock, name, context: names.append(name)
    trusting = ssl.create_default_context(cafile=cert)
    with running_receiver(tls=server) as publisher:
        url = f"https://publisher.example:{publisher.port}/pb?tx=5"
        internet = Internet(public_port=publisher.port)
        with transport.http_client(
            _settings(allow_private=False),
            resolver=lambda host, port: [PUBLIC],
            network=internet,
            ssl_context=trusting,
        ) as client:
            result = transport.send(client, url, allow_private=False)
    assert result.status_code == 200, result.error
    assert internet.connected_to == [PUBLIC]
    # The certificate was checked against the URL's host, which was also the SNI and Host.
    assert names == ["publisher.example"]
    assert publisher.hosts == [f"publisher.example:{publisher.port}"]


def test_every_client_verifies_servers_with_one_context_loaded_once():
    """The certificate authorities load once per process, not twice per client."""
    import ssl

    first = transport.http_client(_settings(allow_private=False))
    second = transport.http_client(_settings(allow_private=False))
    try:
        contexts = {id(c._transport._pool._ssl_context) for c in (first, second)}  # type: ignore[attr-defined]
        assert len(contexts) == 1
        context = first._transport._pool._ssl_context  # type: ignore[attr-defined]
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.cert_store_stats()["x509_ca"] > 0
    finally:
        first.close()
        second.close()
