"""Send a signed batch of identifiers and events to Questwall (Python 3.11+, httpx).

    QUESTWALL_URL=http://localhost:8000 QUESTWALL_GAME_ID=… QUESTWALL_CLIENT_ID=… \
    QUESTWALL_CLIENT_SECRET=… python send_events.py
"""

import hashlib
import hmac
import json
import os
import time
from datetime import UTC, datetime

import httpx

BASE_URL = os.environ.get("QUESTWALL_URL", "http://localhost:8000")
GAME_ID = os.environ["QUESTWALL_GAME_ID"]
CLIENT_ID = os.environ["QUESTWALL_CLIENT_ID"]
CLIENT_SECRET = os.environ["QUESTWALL_CLIENT_SECRET"]


def send(payload: dict) -> httpx.Response:
    body = json.dumps(payload, separators=(",", ":")).encode()  # sign these exact bytes
    timestamp = str(int(time.time() * 1000))
    signature = hmac.new(
        CLIENT_SECRET.encode(), CLIENT_ID.encode() + timestamp.encode() + body, hashlib.sha256
    ).hexdigest()
    headers = {
        "content-type": "application/json",
        "x-client-id": CLIENT_ID,
        "x-timestamp": timestamp,
        "x-signature": signature,
    }
    # Retry network failures with the same bytes and headers: Questwall answers a
    # byte-identical resend with the first answer and stores nothing twice.
    for attempt in range(3):
        try:
            return httpx.post(
                f"{BASE_URL}/v2/custom-events", content=body, headers=headers, timeout=10
            )
        except httpx.TransportError:
            if attempt == 2:
                raise
            time.sleep(2**attempt)
    raise AssertionError("unreachable")


now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
response = send(
    {
        "gameId": GAME_ID,
        "identifiers": [{"userId": "player-1", "email": "player-1@example.com"}],
        "events": [
            {"userId": "player-1", "event": "MATCH_START", "time": now, "groupId": "match-9"},
            {
                "userId": "player-1",
                "event": "MATCH_END",
                "time": now,
                "groupId": "match-9",
                "traits": {"isSurvivor": True, "matchId": 9, "score": 1250},
            },
        ],
    }
)
answer = response.json()
print(response.status_code, answer["message"], answer.get("accepted"), answer.get("rejected"))
