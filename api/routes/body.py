"""Reading a request body with a size limit (413 before the whole body is buffered)."""

from __future__ import annotations

from fastapi import Request

from api.core.errors import ApiError


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"The body must be at most {limit} bytes.")


def _declares_more_than(declared: str | None, limit: int) -> bool:
    """Whether a Content-Length header declares more than `limit` bytes. Only ASCII
    digits count; a number longer than the limit's is larger without converting it
    (int() refuses over 4,300 digits)."""
    if declared is None or not declared.isascii() or not declared.isdigit():
        return False
    digits = declared.lstrip("0")
    return len(digits) > len(str(limit)) or int(digits or "0") > limit


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
