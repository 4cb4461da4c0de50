"""What every answer to fuzzed input must look like, shared by the fuzz tests."""

from __future__ import annotations

import json
from http import HTTPStatus

ERROR_KEYS = {"statusCode", "error", "message", "code", "details"}


def assert_answer_shape(status: int, content_type: str, content: bytes) -> None:
    """No server error; a JSON error carries the error shape with the response's status.

    Tracking links answer a browser: their refusals are HTML pages, and their success a
    redirect."""
    assert status < 500, content[:500]
    if content_type.startswith("text/html") or 300 <= status < 400:
        return
    assert content_type.startswith("application/json"), (status, content_type)
    body = json.loads(content)
    assert isinstance(body, dict), body
    assert body.get("statusCode") == status, body
    if status < 400:
        assert body.get("message"), body
        return
    assert set(body) >= ERROR_KEYS, body
    assert body["error"] == HTTPStatus(status).phrase, body
    assert isinstance(body["code"], str) and body["code"], body
    assert isinstance(body["message"], str) and body["message"], body
    assert isinstance(body["details"], list), body
