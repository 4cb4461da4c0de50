"""Domain errors with stable codes, and the one JSON error shape (SERVICE.md 3)."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


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
