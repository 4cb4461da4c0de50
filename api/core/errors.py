"""The HTTP API's refusals: `ApiError` with a stable code, and the one JSON error shape
(docs/contract.md#errors). The portal's and the CLI's are `DomainError`s
(`api/core/refusals.py`; which face raises which: docs/architecture.md#the-house-rules)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson


class ApiError(Exception):
    """An error a client sees: HTTP status, stable machine code, human message."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.code, self.message, self.details)


def error_body(
    status: int, code: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "statusCode": status,
        "error": HTTPStatus(status).phrase,
        "message": message,
        "code": code,
        "details": details or [],
    }


def invalid_signature() -> ApiError:
    # One answer for a missing header, an unknown or revoked client and a wrong
    # signature, so the API never tells which client ids exist.
    return ApiError(401, "invalid_signature", "The request signature is missing or invalid.")


def validation_failed(message: str, details: list[dict[str, Any]]) -> ApiError:
    return ApiError(422, "validation_failed", message, details)


def json_object(
    body: bytes, *, known: frozenset[str]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """Parse a JSON object body: 400 `invalid_json`, 422 when it is not an object.

    Returns the object and a problem for each unknown top-level field."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "invalid_json", f"The body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise validation_failed(
            "The body must be a JSON object.", [{"path": "", "message": "expected an object"}]
        )
    problems = [{"path": key, "message": "unknown field"} for key in sorted(set(data) - known)]
    return data, problems
