"""Hosted wall benchmark: GET /wall for a player with 3 started offers out of 1,000
(target: p99 ≤ 50 ms at 16 connections on SQLite; the page ≤ 100 KB before images and no
request to another host but images).

Seeds the offers benchmark's 700 missions and 300 quests (targeting US and GB, Android
and iOS) and its approved offerwall, starts the server under test with 127.0.0.1 as a
trusted proxy, has the player open 3 offers through their tracking links (a US address,
an Android phone), then loads their wall.

    .venv/bin/python bench/wall.py [--requests 4000] [--database-url URL] [--api-workers N]
"""

from __future__ import annotations

import argparse
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import sqlalchemy as sa

from api.core.crypto import SecretBox
from api.core.db import build_engine
from bench.common import (
    PHONE,
    add_target_arguments,
    api_workers,
    emit,
    fire_raw,
    http_request,
    load_figures,
    prepared,
    serving,
    target_label,
)
from bench.offers import MISSIONS, QUESTS, seed

PLAYER = "bench-player"


class Loads(HTMLParser):
    """What a page makes the browser fetch: (tag, URL) of every src and stylesheet href."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, str]] = []
        self.cards = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "article":
            self.cards += 1
        if a.get("src"):
            self.loads.append((tag, a["src"] or ""))
        if tag == "link" and a.get("href"):
            self.loads.append((tag, a["href"] or ""))


def owid_of(url: str) -> str:
    engine = build_engine(url)
    with engine.connect() as conn:
        owid = conn.execute(sa.text("SELECT owid FROM offerwall")).scalar_one()
    engine.dispose()
    return str(owid)


def started_offers(url: str, count: int) -> list[str]:
    """Standalone missions the player will open (every offer targets the US on Android)."""
    engine = build_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT id FROM mission WHERE quest_id IS NULL ORDER BY id LIMIT :n"),
            {"n": count},
        ).all()
    engine.dispose()
    return [str(r[0]) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=4000)
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)
    with prepared(args.database_url, TRUSTED_PROXIES="127.0.0.1") as (data, env):
        url = env["DATABASE_URL"]
        seed(url, SecretBox([env["SECRET_KEY"]]))
        owid = owid_of(url)
        path = f"/wall?owid={owid}&uid={PLAYER}"
        requests = [http_request("GET", path, headers=PHONE) for _ in range(args.requests + 200)]
        with serving(env, data, workers) as port:
            base = f"http://127.0.0.1:{port}"
            for mission_id in started_offers(url, 3):
                clicked = httpx.get(
                    f"{base}/missions/{mission_id}?owid={owid}&uid={PLAYER}", headers=PHONE
                )
                assert clicked.status_code == 302, clicked.text
            page = httpx.get(base + path, headers=PHONE)
            fire_raw(port, requests[:200], 4)
            busy = fire_raw(port, requests[200:], 16)
    assert page.status_code == 200, page.text[:500]
    loads = Loads()
    loads.feed(page.text)
    images = [u for tag, u in loads.loads if tag == "img"]
    elsewhere = [
        (tag, u) for tag, u in loads.loads if tag != "img" and urlsplit(u).netloc not in ("",)
    ]
    print(f"server: {target_label(args)}; {MISSIONS + QUESTS} offers, the player started 3")
    print(
        f"wall page: {len(page.content):,} bytes before images, {loads.cards} offer cards, "
        f"{len(images)} images, {len(elsewhere)} other requests to another host "
        f"(scripts, stylesheets, fonts, frames: {elsewhere or 'none'})"
    )
    print(
        f"wall, 16 connections: {busy.statuses}, {busy.requests / busy.seconds:,.0f} "
        f"requests/s, p50 {busy.p50:.1f} ms, p99 {busy.pct(99):.1f} ms"
    )
    emit("wall", {**load_figures(busy), "bytes": len(page.content), "other_hosts": len(elsewhere)})


if __name__ == "__main__":
    main()
