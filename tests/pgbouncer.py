"""A real PgBouncer in transaction pooling mode in front of the test PostgreSQL server, set
up as docs/operations.md tells operators to: DATABASE_URL through it with
DATABASE_POOLER=pgbouncer, DATABASE_DIRECT_URL to the server itself.

`make install-dev` installs Debian's `pgbouncer`. Without it the tests that take the
`pgbouncer` database skip with a message, unless QUESTWALL_REQUIRE_POSTGRES=1 (CI), where
they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from tests.live import free_port

# The URL each running PgBouncer is reached at -> the URL of the database behind it.
_DIRECT: dict[str, str] = {}


def pgbouncer_binary() -> str | None:
    """Debian installs it in /usr/sbin, which is not on every user's PATH."""
    found = shutil.which("pgbouncer")
    if found is None and os.access("/usr/sbin/pgbouncer", os.X_OK):
        found = "/usr/sbin/pgbouncer"
    return found


def _config(server_url: str, port: int) -> str:
    server = make_url(server_url)
    target = f"host={server.host or '127.0.0.1'} port={server.port or 5432} user={server.username}"
    if server.password:
        target += f" password={server.password}"
    return "\n".join(
        [
            "[databases]",
            # Every database name the client asks for, on the test server, as its user.
            f"* = {target}",
            "[pgbouncer]",
            "listen_addr = 127.0.0.1",
            f"listen_port = {port}",
            "unix_socket_dir =",
            # No password from the clients; PgBouncer logs in as the user named above.
            "auth_type = any",
            "pool_mode = transaction",
            "max_client_conn = 500",
            "default_pool_size = 20",
            "",
        ]
    )


@contextmanager
def running_pgbouncer(server_url: str, workdir: Path) -> Iterator[str]:
    """PgBouncer on a free loopback port in front of `server_url`'s server; yields
    `server_url` with PgBouncer's address, and stops it on exit."""
    binary = pgbouncer_binary()
    assert binary is not None, "PgBouncer is missing: run `make install-dev`"
    port = free_port()
    ini = workdir / "pgbouncer.ini"
    ini.write_text(_config(server_url, port))
    ini.chmod(0o600)  # it may hold the server's password
    command = [binary, str(ini)]
    if os.getuid() == 0:
        # PgBouncer refuses to run as root; it reads its configuration before it switches.
        command[1:1] = ["-u", "nobody"]
    log = workdir / "pgbouncer.log"
    with log.open("w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = make_url(server_url).set(host="127.0.0.1", port=port)
    try:
        _wait_for(url.database or "postgres", url.username or "postgres", port, proc, log)
        pooled = url.render_as_string(hide_password=False)
        _DIRECT[pooled] = server_url
        yield pooled
    finally:
        _DIRECT.pop(url.render_as_string(hide_password=False), None)
        proc.terminate()
        proc.wait(timeout=10)


def _wait_for(
    database: str, user: str, port: int, proc: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + 15
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"PgBouncer exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with psycopg.connect(
                host="127.0.0.1", port=port, dbname=database, user=user, connect_timeout=2
            ) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def direct_url(db_url: str) -> str | None:
    """The database behind `db_url` when `db_url` is a running PgBouncer's; else None."""
    return _DIRECT.get(db_url)


def pooler_settings(db_url: str) -> dict[str, str]:
    """The settings a process given `db_url` as DATABASE_URL runs with: behind PgBouncer,
    DATABASE_POOLER and DATABASE_DIRECT_URL as docs/operations.md sets them; else both
    empty (so a developer's `.env` does not leak into a test)."""
    direct = direct_url(db_url)
    if direct is None:
        return {"DATABASE_POOLER": "", "DATABASE_DIRECT_URL": ""}
    return {"DATABASE_POOLER": "pgbouncer", "DATABASE_DIRECT_URL": direct}
