"""The parse-only ceiling: checks the signature and validates the body with the project's
own models, then stores nothing. bench/ingest.py serves it the same way as the server under
test, in the same run; run alone, it measures the ceiling by itself:

    .venv/bin/python bench/parse_only.py [--batches 600] [--api-workers N]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.core.crypto import sign_request, signature_matches
from api.ingest.custom_events import _validate_items, parse_envelope

CLIENT_ID = os.environ.get("BENCH_CLIENT_ID", "")
SECRET = os.environ.get("BENCH_CLIENT_SECRET", "")

app = FastAPI()


@app.post("/v2/custom-events")
async def parse_only(request: Request) -> Response:
    body = await request.body()
    h = request.headers
    expected = sign_request(SECRET, CLIENT_ID, h["x-timestamp"], body)
    if h["x-client-id"] != CLIENT_ID or not signature_matches(expected, h["x-signature"]):
        return Response(status_code=401)
    batch = _validate_items(parse_envelope(body, max_items=1000))
    answer = {
        "statusCode": 200,
        "message": "OK",
        "accepted": {"identifiers": len(batch.identifiers), "events": len(batch.events)},
        "rejected": batch.rejected,
    }
    return Response(orjson.dumps(answer), media_type="application/json")


def main() -> None:
    from bench.common import (
        add_target_arguments,
        api_workers,
        emit,
        fire_raw,
        load_figures,
        prepared,
        questwall,
        reference,
    )
    from bench.ingest import EVENTS_PER_BATCH, make_batches

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    add_target_arguments(parser)
    args = parser.parse_args()
    with prepared(args.database_url) as (data, env):
        game = json.loads(questwall(env, "game", "create", "Ceiling"))
        stream = make_batches(game, 20 + args.batches)
        env = {
            **env,
            "BENCH_CLIENT_ID": game["clientId"],
            "BENCH_CLIENT_SECRET": game["clientSecret"],
        }
        with reference("bench.parse_only:app", env, data, api_workers(args)) as port:
            fire_raw(port, stream[:20], 4)
            parse = fire_raw(port, stream[20:], args.concurrency)
    rate = parse.requests * EVENTS_PER_BATCH / parse.seconds
    print(f"parse-only ceiling: statuses {parse.statuses}, {rate:,.0f} events/s")
    print(f"  request latency p50 {parse.p50:.1f} ms, p99 {parse.pct(99):.1f} ms")
    emit("parse_only", load_figures(parse, EVENTS_PER_BATCH))


if __name__ == "__main__":
    main()
