"""Reading a request body with a size limit (413 before the whole body is buffered)."""

from __future__ import annotations

from fastapi import Request

from api.core.errors import ApiError


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"The body must be at most {limit} bytes.")


async def read_limited_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)
