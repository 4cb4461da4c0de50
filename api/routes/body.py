"""Reading a request body with a size limit (413 before the whole body is buffered)."""

from __future__ import annotations

from fastapi import Request

from api.core.errors import ApiError


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"The body must be at most {limit} bytes.")


# Longer numbers are read as this: more than any limit (int() refuses over 4,300 digits).
_HUGE = 10**18


def declared_length(declared: str | None) -> int | None:
    """The size a Content-Length header declares; None unless it is ASCII digits."""
    if declared is None or not declared.isascii() or not declared.isdigit():
        return None
    digits = declared.lstrip("0")
    return int(digits or "0") if len(digits) <= 18 else _HUGE


def _declares_more_than(declared: str | None, limit: int) -> bool:
    size = declared_length(declared)
    return size is not None and size > limit


async def read_limited_body(request: Request, limit: int) -> bytes:
    if _declares_more_than(request.headers.get("content-length"), limit):
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)
