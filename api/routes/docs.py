"""Shared OpenAPI fragments: the signing headers, error responses, raw JSON bodies."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from models.schemas import ErrorResponse

SIGNED_HEADERS_DOC = (
    "Signed: `x-client-id`, `x-timestamp` (Unix ms, within 300 s of the server clock) and "
    "`x-signature` = lowercase hex HMAC-SHA256, key = the client secret, message = "
    "`clientId + timestamp + rawBody`. A byte-identical resend of a committed request "
    "returns the first answer and stores nothing again."
)

_DESCRIPTIONS = {
    400: "Malformed JSON or header.",
    401: "`invalid_signature` or `timestamp_out_of_window`.",
    403: "`game_mismatch`: gameId is not the credential's game.",
    404: "Not found.",
    409: "`idempotency_key_reused`: the key was used for another body.",
    413: "`payload_too_large` (over 1 MiB) or `too_many_items` (over 1,000).",
    422: "`validation_failed`: the envelope, or every item, is invalid.",
    429: "`rate_limited`: too many requests for this client id; see `Retry-After`.",
}


def error_responses(
    *statuses: int, described: dict[int, str] | None = None
) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route; `described` words a status for that route."""
    words = {**_DESCRIPTIONS, **(described or {})}
    return {s: {"model": ErrorResponse, "description": words[s]} for s in statuses}


REF = "#/components/schemas/{model}"
# Models referenced only by raw-body routes; create_api() adds them to the components.
RAW_BODY_MODELS: list[type[BaseModel]] = []


def request_body(model: type[BaseModel]) -> dict[str, Any]:
    """Document a JSON body that the route reads raw (to verify its signature)."""
    RAW_BODY_MODELS.append(model)
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF.format(model=model.__name__)}}},
        }
    }


def add_raw_body_schemas(openapi: dict[str, Any]) -> dict[str, Any]:
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    for model in RAW_BODY_MODELS:
        schema = model.model_json_schema(ref_template=REF)
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return openapi


def document_tracking_links(openapi: dict[str, Any]) -> dict[str, Any]:
    """Tracking links answer 302 or an HTML page, never JSON: drop the default 200 and the
    422 that FastAPI adds for every route with parameters."""
    for path in ("/missions/{mission_id}", "/quests/{quest_id}"):
        operation = openapi.get("paths", {}).get(path, {}).get("get")
        if operation:
            for status in ("200", "422"):
                operation["responses"].pop(status, None)
    return openapi
