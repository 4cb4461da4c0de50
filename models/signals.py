"""The risk signals' names and the actions a rule may take on them (docs/fraud.md#signals).

Shared by the mission definitions that set a mission's own actions (`offer_schemas`), the
services that compute the signals and act on them (`api/fraud/policy.py`), and the settings
that check the deployment's defaults at start (`api/core/config.py`, `parse_defaults`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

# Seen at the click.
SCRIPTED_AGENT = "scripted_agent"
HOSTING_NETWORK = "hosting_network"
# Seen when a mission is completed.
FAST_COMPLETION = "fast_completion"
STALE_EVENT = "stale_event"
SHARED_IP = "shared_ip"
MULTI_OFFERWALL = "multi_offerwall"
COUNTRY_MISMATCH = "country_mismatch"

CLICK_SIGNALS = (SCRIPTED_AGENT, HOSTING_NETWORK)
COMPLETION_SIGNALS = (FAST_COMPLETION, STALE_EVENT, SHARED_IP, MULTI_OFFERWALL, COUNTRY_MISMATCH)
SIGNALS = CLICK_SIGNALS + COMPLETION_SIGNALS

REFUSE, HOLD, ALLOW = "refuse", "hold", "allow"
ACTIONS = (REFUSE, HOLD, ALLOW)
# The stricter of two actions wins where a mission's rule meets its offerwall's.
STRICTNESS: Mapping[str, int] = {ALLOW: 0, HOLD: 1, REFUSE: 2}


def stricter(action: str, other: object) -> str:
    """`other` where it is an action stricter than `action`, else `action`."""
    if isinstance(other, str) and STRICTNESS.get(other, -1) > STRICTNESS[action]:
        return other
    return action


def allowed_actions(signal: str) -> tuple[str, ...]:
    """A click can be refused; a completion can only be held or allowed."""
    return ACTIONS if signal in CLICK_SIGNALS else (HOLD, ALLOW)


def mission_actions(signal: str) -> tuple[str, ...]:
    """What a mission may set a signal to: only what is stricter than `allow`."""
    return tuple(a for a in allowed_actions(signal) if a != ALLOW)


def action_problem(signal: str, action: object, *, mission: bool = False) -> str | None:
    """What is wrong with setting `signal` to `action` (an offerwall's rule, or with
    `mission` a mission's own), in words; None when nothing is. A mission can only make
    its offerwall's rules stricter, so its `allow` is refused rather than ignored."""
    if signal not in SIGNALS:
        return f"Unknown signal {signal!r}; the signals: {', '.join(SIGNALS)}."
    if mission and action not in mission_actions(signal):
        choices = " or ".join(mission_actions(signal))
        return (
            f"A mission sets {signal} to {choices} (stricter than its offerwall's rule), "
            f"or leaves it out to follow that rule; not {action!r}."
        )
    if action not in allowed_actions(signal):
        return f"{signal} can be set to {', '.join(allowed_actions(signal))}, not {action!r}."
    return None


@lru_cache(maxsize=8)
def parse_defaults(text: str) -> tuple[tuple[str, str], ...]:
    """`QUESTWALL_FRAUD_DEFAULTS`: `signal=action` pairs separated by commas, e.g.
    `multi_offerwall=allow,hosting_network=refuse`; ValueError with what is wrong."""
    pairs = {}
    for part in text.split(","):
        if not part.strip():
            continue
        signal, equals, action = part.partition("=")
        if not equals:
            raise ValueError(f"Write each default as signal=action, not {part.strip()!r}.")
        pairs[signal.strip()] = action.strip()
    for signal, action in pairs.items():
        problem = action_problem(signal, action)
        if problem:
            raise ValueError(problem)
    return tuple(pairs.items())
