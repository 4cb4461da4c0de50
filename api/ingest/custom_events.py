"""POST /v2/custom-events: identifiers and events, applied in one transaction.

Order of checks: signature → rate → JSON envelope → gameId (`signing.authenticate`) →
retry of a committed request → Idempotency-Key → items. Identifiers are applied before events, so events in the
same request see the new links. Valid items are stored; invalid ones are reported.

Why one module of this size: it is the use case end to end (parse, check, apply, answer, the
retry of a committed request), the hottest path of the service; its parts that stand alone
are the package's private modules.
"""

from __future__ import annotations

import contextvars
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, Required, TypedDict, Unpack

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlmodel import Session

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session, read_session, run_transaction, write_session
from api.core.errors import ApiError, error_body, json_object, validation_failed
from api.core.geo import CountryLookup
from api.core.group_commit import PerLoop
from api.core.ratelimit import RateLimiter
from api.fraud import Policy
from api.ingest import refused_requests
from api.ingest._event_store import insert_events
from api.ingest._identifiers import IdentifierWrites, lock_batch_users
from api.ingest.signing import SignedCaller, SignedMessage, authenticate
from api.missions import INDEX, evaluate_events, replay_for_link
from api.webhooks import messages as webhooks
from models import IdempotencyRecord
from models.schemas import NUL, EventIn, IdentifierIn
from models.tables import idempotency_record as _idem
from models.tables import signed_request as _signed
from models.types import utcnow

IDEMPOTENCY_TTL_SECONDS = 24 * 3600
ENVELOPE_KEYS = frozenset({"gameId", "identifiers", "events"})
_REPLAYED = {"Questwall-Replayed": "true"}
# SQLite's group commit: the batches waiting for the event loop, per engine.
_GROUPS: PerLoop[CheckedBatch, Outcome] = PerLoop()

# Pydantic's built-in error types, in the product's words.
_BUILTIN_CODES = {
    "missing": "missing_field",
    "extra_forbidden": "unknown_field",
    "string_type": "invalid_type",
    "float_type": "invalid_value",
    "float_parsing": "invalid_value",
    "dict_type": "invalid_traits",
    "model_type": "invalid_item",
}


@dataclass
class Outcome:
    """An answer to send: HTTP status and JSON body."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Batch:
    identifiers: list[tuple[int, IdentifierIn]] = field(default_factory=list)
    events: list[tuple[int, EventIn]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ParsedBatch:
    """The outcome of parsing a body: validated items, or the error to answer with
    once the request has proven who sent it."""

    batch: _Batch | None
    game_id: str | None
    error: ApiError | None = None


def parse_batch(
    *, body: bytes, settings: Settings, countries: CountryLookup | None = None
) -> ParsedBatch:
    """Step 1, CPU only (the API runs it on the event loop): parse and validate, and
    find the country of each event's `playerIp` with `countries` (in memory).

    Errors are kept, not raised: the signature is checked first, so an unauthenticated
    caller learns nothing but `invalid_signature`.
    """
    try:
        envelope = parse_envelope(body, max_items=settings.max_items_per_request)
    except ApiError as exc:
        return ParsedBatch(None, None, exc)
    batch = _validate_items(envelope)
    if countries is not None:
        for _, event in batch.events:
            if event.playerIp is not None:
                event.located(countries.country(event.playerIp))
    return ParsedBatch(batch, envelope["gameId"])


class BatchArgs(TypedDict, total=False):
    """What `check_batch` and `store_batch` take: the request and where to check it."""

    engine: Required[Engine]
    box: Required[SecretBox]
    settings: Required[Settings]
    request: Required[SignedMessage]
    parsed: Required[ParsedBatch]
    idempotency_key: str | None
    limiter: RateLimiter | None


def store_batch(**args: Unpack[BatchArgs]) -> Outcome:
    """Step 2, database: the signed-caller check (signature, rate, envelope, game), a
    resend answered from its record, then identifiers and events in one transaction."""
    checked = check_batch(**args)
    if isinstance(checked, Outcome):
        return checked
    return write_alone(args["engine"], args["settings"], checked)


async def write_grouped(
    engine: Engine, settings: Settings, checked: CheckedBatch | Outcome
) -> Outcome:
    """The write of `check_batch`'s batch on the event loop, for SQLite: with the other
    batches waiting for the loop, in one transaction (group commit)."""
    if isinstance(checked, Outcome):
        return checked
    group = _GROUPS.get((engine, id(settings)), partial(write_together, engine, settings))
    return await group.submit(checked)


@dataclass(frozen=True)
class CheckedBatch:
    """A batch that passed every check and has no earlier answer: what its write needs."""

    caller: SignedCaller
    batch: _Batch
    idempotency_key: str | None
    digest: str  # of the body, only with an Idempotency-Key
    # The request's context (its id, its trace): a group's write runs each batch in its
    # own, so the outbox messages a batch makes name the request that sent it.
    made_in: contextvars.Context = field(default_factory=contextvars.copy_context)


def check_batch(**args: Unpack[BatchArgs]) -> CheckedBatch | Outcome:
    """The reads before the write: the signed-caller check (raises its ApiError), then
    the stored answer of a resend or of an Idempotency-Key, if any."""
    engine, request, parsed = args["engine"], args["request"], args["parsed"]
    with read_session(engine) as session:
        caller = authenticate(
            session,
            box=args["box"],
            request=request,
            game_id=parsed.game_id,
            window_seconds=args["settings"].signature_window_seconds,
            limiter=args.get("limiter"),
            body_error=parsed.error,
            with_record=True,
        )
    # Only a request that passed every check above has a record: its resend carries
    # the same bytes (the signature covers them), so it passes them again.
    if caller.record is not None:
        status, response = caller.record
        return Outcome(status, response, dict(_REPLAYED))
    assert parsed.batch is not None
    key = args.get("idempotency_key")
    # Only an Idempotency-Key needs the body's hash (to refuse the key for another body).
    digest = hashlib.sha256(request.body).hexdigest() if key is not None else ""
    if key is not None:
        _check_idempotency_key(key)
        with new_session(engine) as session:
            earlier = _idempotent_answer(session, caller.game_id, key, digest)
        if earlier is not None:
            return earlier
    return CheckedBatch(caller, parsed.batch, key, digest)


def write_alone(engine: Engine, settings: Settings, checked: CheckedBatch) -> Outcome:
    """Write one checked batch in a transaction of its own."""
    caller, key, digest = checked.caller, checked.idempotency_key, checked.digest
    try:
        # A deadlock or serialization failure re-runs the whole transaction.
        outcome = run_transaction(lambda: _store(engine, checked, Policy.from_settings(settings)))
    except IntegrityError:
        # The same request (or key) committed in parallel: answer as it was answered.
        with new_session(engine) as session:
            again = _stored_answer(session, caller) or (
                _idempotent_answer(session, caller.game_id, key, digest) if key else None
            )
        if again is None:
            raise
        return again
    _maybe_prune(engine, settings)
    return outcome


def write_together(
    engine: Engine, settings: Settings, batches: Sequence[CheckedBatch]
) -> list[Outcome | Exception]:
    """Write checked batches in one transaction, one commit (SQLite's group commit).

    Each batch runs in a savepoint of its own: one that fails (or is all invalid) is
    rolled back alone, and a failed one is then written alone (`write_alone`), which
    answers a twin from its record. If the shared transaction itself fails, each batch
    is written alone. Nothing is answered before the commit, so every answer is durable.
    A batch whose own write then fails gets its error, the others their outcome.
    """
    done: list[Outcome | None] = []
    policy = Policy.from_settings(settings)
    try:
        with write_session(engine) as session:
            for checked in batches:
                done.append(_apply_in_savepoint(session, checked, policy))
    except DBAPIError:
        done = [None] * len(batches)
    outcomes: list[Outcome | Exception] = []
    for outcome, checked in zip(done, batches, strict=True):
        try:
            outcomes.append(outcome or checked.made_in.run(write_alone, engine, settings, checked))
        except Exception as exc:  # this request's error, raised to it alone
            outcomes.append(exc)
    _maybe_prune(engine, settings)
    return outcomes


def _apply_in_savepoint(session: Session, checked: CheckedBatch, policy: Policy) -> Outcome | None:
    savepoint = session.begin_nested()
    try:
        outcome = checked.made_in.run(_apply, session, checked, policy)
    except Exception:  # any failure: this batch alone is rolled back, then retried alone
        savepoint.rollback()
        return None
    if outcome.status == 422:
        savepoint.rollback()  # all invalid: nothing is stored
    else:
        savepoint.commit()
    return outcome


def parse_envelope(body: bytes, *, max_items: int) -> dict[str, Any]:
    """Parse and check the request envelope; the whole request is refused on any error."""
    data, problems = json_object(body, known=ENVELOPE_KEYS)
    if not isinstance(data.get("gameId"), str) or not data.get("gameId"):
        problems.append({"path": "gameId", "message": "required, a non-empty string"})
    for key in ("identifiers", "events"):
        if data.get(key) is None:
            data[key] = []
        elif not isinstance(data[key], list):
            problems.append({"path": key, "message": "must be an array"})
    if problems:
        raise validation_failed("The request envelope is invalid.", problems)
    for key in ("identifiers", "events"):
        if len(data[key]) > max_items:
            raise ApiError(
                413,
                "too_many_items",
                f"At most {max_items} {key} are accepted in one request.",
                [{"path": key, "count": len(data[key]), "limit": max_items}],
            )
    return data


def _validate_items(envelope: dict[str, Any]) -> _Batch:
    batch = _Batch()
    for kind, items, model, sink in (
        ("identifier", envelope["identifiers"], IdentifierIn, batch.identifiers),
        ("event", envelope["events"], EventIn, batch.events),
    ):
        for index, raw in enumerate(items):
            parsed, problem = _validate_one(model, raw)
            if problem is None:
                sink.append((index, parsed))  # type: ignore[arg-type]
            else:
                batch.rejected.append({"kind": kind, "index": index, **problem})
    return batch


def _validate_one(model: type[BaseModel], raw: Any) -> tuple[BaseModel | None, dict | None]:
    if not isinstance(raw, dict):
        return None, {"code": "invalid_item", "message": "each item must be a JSON object"}
    try:
        return model.model_validate(raw), None
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        # An unknown field's name is the client's text: a NUL in it could not be stored
        # with the answer (PostgreSQL), so it is shown escaped.
        where = ".".join(str(p) for p in first["loc"]).replace(NUL, "\\u0000")
        code = _BUILTIN_CODES.get(first["type"], first["type"])
        message = (
            first["msg"] if first["type"] not in _BUILTIN_CODES else f"{where}: {first['msg']}"
        )
        return None, {"code": code, "message": message, "field": where or None}


def _store(engine: Engine, checked: CheckedBatch, policy: Policy) -> Outcome:
    """The write transaction of a batch. It may run more than once (`run_transaction`),
    so it leaves the batch as it found it."""
    with write_session(engine) as session:
        outcome = _apply(session, checked, policy)
        if outcome.status == 422:
            session.rollback()  # all invalid: nothing is stored
    return outcome


def _apply(session: Session, checked: CheckedBatch, policy: Policy) -> Outcome:
    """Identifiers, events and the answer's record, in the session's transaction; an
    all-invalid batch (422) writes no record, and its caller rolls it back."""
    caller, batch = checked.caller, checked.batch
    game_id = caller.game_id
    rejected = list(batch.rejected)
    now = utcnow()
    mission_index = INDEX.current(session)

    def on_link(platform_user_id: str, user_id: str) -> None:
        if mission_index.tells(game_id, "player.linked"):
            webhooks.emit(
                session,
                game_id=game_id,
                player=platform_user_id,
                items=[("player.linked", {"userId": user_id, "platformUserId": platform_user_id})],
                now=now,
            )
        replay_for_link(
            session,
            mission_index=mission_index,
            game_id=game_id,
            platform_user_id=platform_user_id,
            now=now,
            policy=policy,
        )

    # Lock order: the batch's game users by userId, before any item is applied.
    items = [item for _, item in batch.identifiers]
    users = lock_batch_users(session=session, game_id=game_id, items=items)
    writes = IdentifierWrites(session, users, items)
    accepted_identifiers = 0
    for index, item in batch.identifiers:  # applied in the order of the request
        refusal = writes.apply(item, on_link=on_link)
        if refusal is None:
            accepted_identifiers += 1
            continue
        rejected.append(
            {
                "kind": "identifier",
                "index": index,
                "code": refusal.code,
                "message": refusal.message,
                "field": refusal.field,
            }
        )
    writes.flush()
    events = [e for _, e in batch.events]
    insert_events(session=session, game_id=game_id, events=events)
    evaluate_events(
        session, mission_index=mission_index, game_id=game_id, events=events, now=now, policy=policy
    )
    outcome = _answer(rejected, accepted_identifiers, len(batch.events))
    if outcome.status != 422:
        # Recorded in the same transaction: a parallel twin of this request fails on
        # the primary key here, rolls back, and answers from this record instead.
        _remember(session, caller, checked.idempotency_key, checked.digest, outcome)
    return outcome


def _answer(refusals: list[dict[str, Any]], identifiers: int, events: int) -> Outcome:
    rejected = sorted(refusals, key=lambda r: (r["kind"] != "identifier", r["index"]))
    rejected = [{k: v for k, v in r.items() if k != "field" or v is not None} for r in rejected]
    accepted = {"identifiers": identifiers, "events": events}
    if not rejected:
        return Outcome(
            200, {"statusCode": 200, "message": "OK", "accepted": accepted, "rejected": []}
        )
    if identifiers + events > 0:
        return Outcome(
            207,
            {
                "statusCode": 207,
                "message": "Partially accepted",
                "accepted": accepted,
                "rejected": rejected,
            },
        )
    body = error_body(
        422, "validation_failed", "No item of the request is valid; nothing was stored.", rejected
    )
    body.update({"accepted": accepted, "rejected": rejected})
    return Outcome(422, body)


def _remember(
    session: Session,
    caller: SignedCaller,
    idempotency_key: str | None,
    request_digest: str,
    outcome: Outcome,
) -> None:
    now = utcnow()
    session.execute(
        _signed.insert().values(
            client_id=caller.client_id,
            signature=caller.signature,
            status_code=outcome.status,
            response=outcome.body,
            created_at=now,
        )
    )
    if idempotency_key is None:
        return
    expired = now - timedelta(seconds=IDEMPOTENCY_TTL_SECONDS)
    session.execute(
        sa.delete(_idem).where(
            _idem.c.game_id == caller.game_id,
            _idem.c.key == idempotency_key,
            _idem.c.created_at < expired,
        )
    )
    session.execute(
        _idem.insert().values(
            game_id=caller.game_id,
            key=idempotency_key,
            request_digest=request_digest,
            status_code=outcome.status,
            response=outcome.body,
            created_at=now,
        )
    )


def _stored_answer(session: Session, caller: SignedCaller) -> Outcome | None:
    row = session.execute(
        sa.select(_signed.c.status_code, _signed.c.response).where(
            _signed.c.client_id == caller.client_id, _signed.c.signature == caller.signature
        )
    ).first()
    if row is None:
        return None
    return Outcome(row.status_code, row.response, dict(_REPLAYED))


def _check_idempotency_key(key: str) -> None:
    if not 1 <= len(key) <= 255 or not key.isprintable():
        raise ApiError(
            400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable characters."
        )


def _idempotent_answer(
    session: Session, game_id: str, key: str, request_digest: str
) -> Outcome | None:
    row = session.get(IdempotencyRecord, (game_id, key))
    if row is None:
        return None
    if (utcnow() - row.created_at).total_seconds() > IDEMPOTENCY_TTL_SECONDS:
        return None
    if row.request_digest != request_digest:
        raise ApiError(
            409,
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a different request body.",
        )
    return Outcome(row.status_code, row.response, {"Idempotent-Replayed": "true"})


_last_prune = 0.0


def _maybe_prune(engine: Engine, settings: Settings) -> None:
    """Forget expired retry records, at most once a minute per process."""
    global _last_prune
    if time.monotonic() - _last_prune < 60:
        return
    _last_prune = time.monotonic()
    prune_expired(engine=engine, settings=settings)


def prune_expired(*, engine: Engine, settings: Settings) -> int:
    """Delete signed-request records past any valid resend, idempotency keys past 24 h,
    and refused requests kept for the debugger past theirs (`refused_requests.RETENTION`)."""
    now = utcnow()
    # A request signed up to `window` in the future stays valid until 2 × window from now.
    signed_cutoff = now - timedelta(seconds=2 * settings.signature_window_seconds + 60)
    idem_cutoff = now - timedelta(seconds=IDEMPOTENCY_TTL_SECONDS)
    with write_session(engine) as session:
        a = session.execute(sa.delete(_signed).where(_signed.c.created_at < signed_cutoff))
        b = session.execute(sa.delete(_idem).where(_idem.c.created_at < idem_cutoff))
        refused = refused_requests.prune(session, now)
        return int(a.rowcount or 0) + int(b.rowcount or 0) + refused  # type: ignore[attr-defined]
