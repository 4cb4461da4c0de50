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
    503: "`service_unavailable`: the database cannot be reached right now and nothing was "
    "stored; retry after `Retry-After` seconds.",
}
# The answers of the routes an offerwall calls with its API key, where they differ.
API_KEY_DESCRIBED = {
    400: "`invalid_parameter`: a query parameter is not valid; `details[0].path` names it.",
    401: "`invalid_api_key`: the x-api-key header is missing or not a current key.",
    403: "`offerwall_not_approved`: the offerwall is pending, rejected or suspended.",
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


def html_answer(description: str) -> dict[str, Any]:
    """An answer that is a small HTML page for a person (tracking links, the hosted wall)."""
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


# What FastAPI calls the 422 it documents for every route with parameters.
_FASTAPI_422 = "Validation Error"


def drop_unreachable_answers(openapi: dict[str, Any]) -> dict[str, Any]:
    """Document only answers a route gives. FastAPI adds a 422 to every route with
    parameters, but ours take each parameter as text and check it themselves (400
    `invalid_parameter`), so only a route that documents its own 422 keeps one; and
    tracking links answer 302 or an HTML page, never the default 200."""
    for path, operations in openapi.get("paths", {}).items():
        for operation in operations.values():
            answers = operation["responses"]
            if answers.get("422", {}).get("description") == _FASTAPI_422:
                del answers["422"]
            if path in ("/missions/{mission_id}", "/quests/{quest_id}"):
                answers.pop("200", None)
    return openapi
