"""Webhook benchmarks (docs/game-integration.md#webhooks), with one dispatcher as
`questwall worker` runs it (8 threads), in this process, to a local receiver that answers
204 at once:

1. Messages delivered per second: N messages stored, then delivered, to one endpoint (one
   lane: a game's messages in order) and to 8 endpoints of 8 games (8 lanes).
2. The delay from a message's making (in its causing transaction) to its arrival, with
   messages made at a steady rate while the dispatcher runs (target: p99 within 1 s).

    .venv/bin/python bench/webhooks.py [--messages 3000] [--rate 50] [--seconds 10]
        [--database-url URL]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api import webhooks
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, write_session
from api.studios import games
from bench.common import add_target_arguments, emit, temp_dir, throwaway_database
from models.tables import webhook_message as _message


class _Arrivals:
    def __init__(self) -> None:
        self.times: dict[str, float] = {}  # webhook-id → arrival (unix seconds)
        self.lock = threading.Lock()


def _receiver(arrivals: _Arrivals) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with arrivals.lock:
                arrivals.times.setdefault(self.headers["webhook-id"], time.time())
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _games(engine, box: SecretBox, url: str, count: int) -> list[str]:
    made = []
    with write_session(engine) as session:
        for n in range(count):
            game = games.create_game(session=session, box=box, name=f"Webhook bench {n}").game_id
            webhooks.add_endpoint(
                session=session, box=box, game_id=game, url=url, allow_private=True
            )
            made.append(game)
    return made


def _make(engine, game_ids: list[str], count: int) -> None:
    with write_session(engine) as session:
        for n in range(count):
            webhooks.emit(
                session,
                game_id=game_ids[n % len(game_ids)],
                player=f"player-{n % 100}",
                items=[("mission.completed", {"userId": f"u{n}", "n": n})],
                now=datetime.now(UTC),
            )


def _delivered(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(
            sa.select(sa.func.count()).where(_message.c.status == "delivered")
        ).scalar_one()


def _throughput(engine, box, settings, game_ids: list[str], count: int) -> float:
    before = _delivered(engine)
    _make(engine, game_ids, count)
    dispatcher = webhooks.WebhookDispatcher(engine=engine, box=box, settings=settings)
    stop = threading.Event()
    thread = threading.Thread(target=dispatcher.run, args=(stop,), kwargs={"poll_seconds": 0.05})
    started = time.perf_counter()
    thread.start()
    while _delivered(engine) - before < count:
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    stop.set()
    thread.join()
    return count / seconds


def _delay(engine, box, settings, game_ids, arrivals: _Arrivals, rate: float, seconds: float):
    dispatcher = webhooks.WebhookDispatcher(engine=engine, box=box, settings=settings)
    stop = threading.Event()
    thread = threading.Thread(target=dispatcher.run, args=(stop,))
    thread.start()
    made: dict[str, float] = {}
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        at = time.time()
        with write_session(engine) as session:
            webhooks.emit(
                session,
                game_id=game_ids[n % len(game_ids)],
                player=f"p{n}",
                items=[("conversion.approved", {"n": n, "at": at})],
                now=datetime.now(UTC),
            )
            message_id = session.execute(
                sa.select(_message.c.message_id).order_by(_message.c.id.desc()).limit(1)
            ).scalar_one()
        made[message_id] = at
        n += 1
        time.sleep(max(0.0, 1 / rate - (time.time() - at)))
    deadline = time.time() + 10
    while time.time() < deadline and any(m not in arrivals.times for m in made):
        time.sleep(0.05)
    stop.set()
    thread.join()
    delays = sorted((arrivals.times[m] - t) * 1000 for m, t in made.items() if m in arrivals.times)
    return delays, len(made)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--rate", type=float, default=50, help="messages made a second (delay)")
    parser.add_argument("--seconds", type=float, default=10)
    add_target_arguments(parser)
    args = parser.parse_args()
    box = SecretBox(["webhook-bench-key"])
    arrivals = _Arrivals()
    server = _receiver(arrivals)
    url = f"http://127.0.0.1:{server.server_address[1]}/hooks"
    data = temp_dir()
    with throwaway_database(args.database_url, data) as db_url:
        migrate(db_url)
        engine = build_engine(db_url)
        settings = Settings.model_validate(
            {"DATABASE_URL": db_url, "POSTBACK_ALLOW_PRIVATE": "true"}
        )
        one = _games(engine, box, url, 1)
        eight = _games(engine, box, url, 8)
        single = _throughput(engine, box, settings, one, args.messages)
        lanes = _throughput(engine, box, settings, eight, args.messages)
        delays, made = _delay(engine, box, settings, eight, arrivals, args.rate, args.seconds)
        engine.dispose()
    server.shutdown()
    p50 = statistics.median(delays) if delays else None
    p99 = delays[max(0, int(len(delays) * 0.99) - 1)] if delays else None
    print(f"delivered per second, one endpoint (one lane):   {single:8.0f}")
    print(f"delivered per second, 8 endpoints (8 lanes):     {lanes:8.0f}")
    print(
        f"making to arrival at {args.rate:g}/s: p50 {p50:.0f} ms, p99 {p99:.0f} ms "
        f"({len(delays)} of {made} arrived; target p99 <= 1000 ms)"
    )
    emit(
        "webhooks",
        {
            "rate_one_endpoint": single,
            "rate_eight_endpoints": lanes,
            "delay_p50_ms": p50,
            "delay_p99_ms": p99,
            "arrived": len(delays),
            "made": made,
        },
    )


if __name__ == "__main__":
    main()
