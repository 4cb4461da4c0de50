"""A signed-body mutation fuzzer for the two signed endpoints.

It starts from valid bodies, changes them structurally (wrong types, NUL characters, huge
and deeply nested values, odd unicode, extreme times and numbers, unknown and missing
fields), signs the result like a game server and sends it. Whatever it sends, the answer
is below 500 and has the error shape when it is an error.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.app import create_api
from tests.api.fuzzing import assert_answer_shape
from tests.factories import FixedCountries, SignedClient, iso_now

# Thousands of generated cases through paths the example tests already measure: coverage's
# tracer adds 60-75% to a test's time (Python 3.11) and nothing to the figure.
pytestmark = pytest.mark.no_cover

EXAMPLES = 250


def _deep(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(levels):
        value = {"a": value} if i % 2 else [value]
    return value


ODD_TEXT = [
    "",
    "\u0000",
    "a\u0000b",
    "\u202eevil",
    "\ufeffBOM",
    "e\u0301",
    "İstanbul",
    "😀" * 40,
    "\U0010ffff",
    "\ud800",  # a lone surrogate: sent as the escape \ud800, which is not valid JSON text
    "x" * 129,
    "x" * 256,
    "x" * 20_000,
    " ",
    "null",
    "0x" + "ab" * 20,
    "00000000-0000-0000-0000-000000000000",
]
EXTREME_TIMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-01:00",
    "0001-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "2026-02-29T00:00:00Z",
    "2024-02-29T23:59:59.999+23:59",
    "2026-11-21T24:00:00Z",
    "2026-11-21T10:00:00+99:99",
    "1970-01-01T00:00:00." + "9" * 500 + "Z",
    "２０２６-11-21T10:00:00Z",
]
EXTREME_NUMBERS = [
    0,
    -1,
    2**31,
    2**63 - 1,
    2**63,
    -(2**63) - 1,
    2**64 - 1,
    10**30,
    1e308,
    -1e308,
    5e-324,
    -0.0,
    1.5,
    float("inf"),  # serialized as Infinity: not JSON
]
WRONG_TYPES = [None, True, False, [], {}, [1, "a"], {"k": "v"}]

nasty_values = st.one_of(
    st.sampled_from(ODD_TEXT),
    st.sampled_from(EXTREME_TIMES),
    st.sampled_from(EXTREME_NUMBERS),
    st.sampled_from(WRONG_TYPES),
    st.sampled_from([31, 32, 33, 200, 300]).map(_deep),
    st.text(max_size=30),
    st.integers(),
    st.floats(allow_nan=False),
)
# A fresh copy each time: later mutations change drawn lists and objects in place.
nasty = nasty_values.map(copy.deepcopy)


def _paths(value: Any, here: tuple = ()) -> list[tuple]:
    """Every location in a JSON document down to 12 levels, the root included (deeper
    ones are inside values the fuzzer made deep on purpose)."""
    found = [here]
    if len(here) >= 12:
        return found
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*here, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*here, index))
    return found


def _get(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@st.composite
def mutated(draw: st.DrawFn, valid: dict[str, Any]) -> Any:
    """`valid` with one to four structural changes."""
    doc: Any = json.loads(json.dumps(valid))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(doc)))
        target = _get(doc, path)
        kind = draw(st.sampled_from(["replace", "delete", "add", "rename", "repeat", "splice"]))
        if not path or kind == "replace":
            if not path:
                doc = draw(nasty) if kind == "replace" else doc
                continue
            _get(doc, path[:-1])[path[-1]] = draw(nasty)
        elif kind == "delete":
            del _get(doc, path[:-1])[path[-1]]
        elif kind == "add" and isinstance(target, dict):
            target[draw(st.sampled_from([*ODD_TEXT[:12], "Value", "extra"]))] = draw(nasty)
        elif kind == "add" and isinstance(target, list):
            target.append(draw(nasty))
        elif kind == "rename" and isinstance(path[-1], str):
            parent = _get(doc, path[:-1])
            parent[path[-1] + draw(st.sampled_from(["\u0000", "é", "_", " "]))] = parent.pop(
                path[-1]
            )
        elif kind == "splice" and isinstance(target, str):
            # An odd character inside a string that is otherwise valid.
            at = draw(st.integers(0, len(target)))
            odd = draw(st.sampled_from(["\u0000", "\u202e", "\ufeff", "😀", "\x7f", "\n"]))
            _get(doc, path[:-1])[path[-1]] = target[:at] + odd + target[at:]
        elif kind == "repeat" and isinstance(target, list) and 0 < len(json.dumps(target)) < 2000:
            target.extend(target * draw(st.sampled_from([1, 10, 1000])))  # to over 1,000 items
    return doc


@pytest.fixture
def fuzz_client(engine, api_settings, box, game) -> SignedClient:
    # Server errors come back as 500 answers (and fail the check), not as exceptions.
    app = create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())
    client = TestClient(app, client=("127.0.0.1", 50000), raise_server_exceptions=False)
    return SignedClient(client, game)


def _fuzz(signed: SignedClient, path: str, valid: dict[str, Any]) -> None:
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(body=mutated(valid))
    def check(body: Any) -> None:
        raw = json.dumps(body).encode()  # ensure_ascii: a lone surrogate stays an escape
        response = signed.post_raw(path, raw)
        content_type = response.headers.get("content-type", "")
        assert_answer_shape(response.status_code, content_type, response.content)

    check()
    # The valid body itself is still accepted after all that.
    valid_answer = signed.send(valid, path=path)
    assert valid_answer.status_code == 200, valid_answer.text


def test_mutated_custom_events_never_give_a_server_error(fuzz_client, game):
    valid = {
        "gameId": game.game_id,
        "identifiers": [
            {"userId": "p1", "email": "p1@example.com", "steamId": "s-1", "discordId": "123"},
            {"userId": "p2", "walletAddress": "0x" + "ab" * 20, "platformUserId": None},
        ],
        "events": [
            {
                "userId": "p1",
                "event": "MATCH_END",
                "time": iso_now(-60),
                "value": 1250.5,
                "traits": {"score": 1250, "loadout": {"weapon": "axe", "perks": [1, 2]}},
                "groupId": "match-9",
            },
            {"userId": "p2", "event": "KILL", "time": iso_now(-30)},
        ],
    }
    _fuzz(fuzz_client, "/v2/custom-events", valid)


def test_mutated_lookups_never_give_a_server_error(fuzz_client, game):
    valid = {"gameId": game.game_id, "userIds": ["p1", "p2", "p3"]}
    _fuzz(fuzz_client, "/v2/platform-users/lookup", valid)
