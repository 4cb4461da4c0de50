"""The parse-only ceiling: checks the signature and validates the body with the project's
own models, then stores nothing. Served by granian like the all-in-one server."""

from __future__ import annotations

import os

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response

from api.core.crypto import sign_request, signature_matches
from api.services.ingestion import _validate_items, parse_envelope

CLIENT_ID = os.environ["BENCH_CLIENT_ID"]
SECRET = os.environ["BENCH_CLIENT_SECRET"]

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
