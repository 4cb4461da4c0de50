"""Risk signals and what they do (docs/fraud.md#signals).

A signal is a short name stored with the click and the conversion it was seen on. Some
are seen when the player clicks (the User-Agent, the network); the others when a mission
is completed (how fast, how old its events, who else clicked from that address, whether
the player took the offer through another offerwall, whether the game saw the player in
the click's country). Each signal has a default action, an offerwall may set its own
(staff, on the fraud page or `questwall fraud rules`), and a mission may make it
stricter for itself (`Policy.action`):

- `refuse` (click signals only): the click gets the neutral 403 page and is recorded as
  refused with the signal as its reason;
- `hold`: the click goes through, but a conversion it leads to waits in the review queue
  (`api/conversions/review.py`) as pending, with no postback until approved;
- `allow`: the signal is only recorded.

Everything here is cheap: the click signals are in-memory lookups, and the completion
signals cost three indexed queries per conversion, never per event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from api.core.config import Settings
from api.core.refusals import N_, DomainError

# The signals' names and actions are the data model's (models/signals.py); they are
# named here too, as `fraud.SIGNALS` and so on.
from models.signals import (
    ALLOW,
    COUNTRY_MISMATCH,
    FAST_COMPLETION,
    HOLD,
    HOSTING_NETWORK,
    MULTI_OFFERWALL,
    REFUSE,
    SCRIPTED_AGENT,
    SHARED_IP,
    SIGNALS,
    STALE_EVENT,
    action_problem,
    allowed_actions,
    parse_defaults,
    stricter,
)
from models.tables import click as _click
from models.tables import offerwall as _offerwall

# What each signal does unless an offerwall says otherwise. A scripted User-Agent is
# refused while QUESTWALL_REFUSE_SCRIPTED_AGENTS is on (the default), allowed when off.
DEFAULT_ACTIONS: Mapping[str, str] = {
    SCRIPTED_AGENT: REFUSE,
    HOSTING_NETWORK: HOLD,
    FAST_COMPLETION: HOLD,
    STALE_EVENT: HOLD,
    SHARED_IP: HOLD,
    MULTI_OFFERWALL: HOLD,
    COUNTRY_MISMATCH: HOLD,
}

DESCRIPTIONS: Mapping[str, str] = {
    SCRIPTED_AGENT: "a script's, crawler's or headless browser's User-Agent",
    HOSTING_NETWORK: "a hosting or datacenter network (VPNs and proxies live there)",
    FAST_COMPLETION: "completed sooner after the click than the mission's minimum time",
    STALE_EVENT: "a completing event timed long before it arrived",
    SHARED_IP: "many players clicked from one IP address with one device",
    MULTI_OFFERWALL: "the player took the same offer through another offerwall",
    COUNTRY_MISMATCH: "the game saw the player in another country than the click came from",
}

# The page a refused click gets: the same neutral words whichever rule refused it.
REFUSAL_TITLE = N_("Not available right now")
REFUSAL_MESSAGE = N_("This offer cannot be opened right now. Please try again later.")

# The window the shared_ip and multi_offerwall signals look back over.
LOOKBACK = timedelta(hours=24)


class FraudRuleError(DomainError, ValueError):
    """An offerwall's action that is not one of the signal's."""


@dataclass(frozen=True)
class Policy:
    """The operator's settings the signals use."""

    scripted_action: str = REFUSE
    players_per_ip: int = 20
    stale_event_hours: float = 24
    review_hours: float = 72
    # The deployment's own defaults (QUESTWALL_FRAUD_DEFAULTS), over the built-in ones.
    overrides: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            scripted_action=REFUSE if settings.refuse_scripted_agents else ALLOW,
            players_per_ip=settings.players_per_ip,
            stale_event_hours=settings.stale_event_hours,
            review_hours=settings.review_auto_approve_hours,
            # Read once per text: a policy is made for every batch of events.
            overrides=parse_defaults(settings.fraud_defaults),
        )

    def defaults(self) -> dict[str, str]:
        return {**DEFAULT_ACTIONS, SCRIPTED_AGENT: self.scripted_action, **dict(self.overrides)}

    def action(
        self,
        signal: str,
        offerwall_actions: Mapping[str, str] | None,
        mission_actions: Mapping[str, str] | None = None,
    ) -> str:
        """The signal's action: the offerwall's (else the default), made stricter by the
        mission's own when it sets one; a mission never loosens it."""
        chosen = (offerwall_actions or {}).get(signal)
        action = chosen if chosen in allowed_actions(signal) else self.defaults()[signal]
        own = (mission_actions or {}).get(signal)
        return stricter(action, own) if own in allowed_actions(signal) else action

    def held(
        self,
        signals: Sequence[str],
        offerwall_actions: Mapping[str, str] | None,
        mission_actions: Mapping[str, str] | None = None,
    ) -> bool:
        return any(self.action(s, offerwall_actions, mission_actions) != ALLOW for s in signals)

    def review_due(self, now: datetime) -> datetime | None:
        return now + timedelta(hours=self.review_hours) if self.review_hours else None


DEFAULT_POLICY = Policy()


def checked_actions(actions: Mapping[str, Any]) -> dict[str, str]:
    """An offerwall's actions, each a known signal with one of its actions; refused with
    what is wrong otherwise (a mission's own are checked by its definition)."""
    for signal, action in actions.items():
        problem = action_problem(signal, action)
        if problem:
            raise FraudRuleError(problem)
    return dict(actions)


def strictest(actions: Iterable[Mapping[str, str] | None]) -> dict[str, str]:
    """Per signal, the strictest of several missions' own actions (a quest's click: one
    rule for the quest's missions together)."""
    result: dict[str, str] = {}
    for own in actions:
        for signal, action in (own or {}).items():
            result[signal] = stricter(result.get(signal, ALLOW), action)
    return {signal: action for signal, action in result.items() if action != ALLOW}


# --- completion signals -------------------------------------------------------------------


@dataclass(frozen=True)
class Completion:
    """What is known when a mission is completed."""

    click_id: int
    platform_user_id: str
    offerwall_id: str
    mission_id: str
    quest_id: str | None
    started_at: datetime
    # The completing event: when the game says it happened, and when it arrived.
    event_time: datetime
    arrived_at: datetime
    min_seconds: int | None
    # The country of the player's address as the game saw it (the event's playerIp).
    event_country: str | None = None
    # The mission's own actions, stricter than the offerwall's (`Policy.action`).
    mission_actions: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Assessment:
    """A completion's signals, whether the offerwall's rules hold it for review, and
    whether the offerwall hears of held and rejected conversions by postback."""

    signals: list[str]
    held: bool
    notify: bool


# The completion's look-ups, built once: a conversion runs them with its own values (and
# SQLAlchemy compiles each once), rather than building three statements per conversion.
_CLICK = (
    sa.select(
        _click.c.ip,
        _click.c.device,
        _click.c.country,
        _click.c.signals,
        _offerwall.c.fraud_actions,
        _offerwall.c.review_postbacks,
    )
    .join(_offerwall, _offerwall.c.id == _click.c.offerwall_id)
    .where(_click.c.id == sa.bindparam("click_id"))
)
_RECENT = _click.c.created_at >= sa.bindparam("since")
# Along ix_click_ip_device_created: one address's clicks from one device.
_PLAYERS_ON_DEVICE = sa.select(sa.func.count(sa.distinct(_click.c.platform_user_id))).where(
    _click.c.ip == sa.bindparam("ip"), _click.c.device == sa.bindparam("device"), _RECENT
)


def _clicked_elsewhere(offer: sa.Column[Any]) -> sa.Select:
    """A click from the address on the offer (`offer`: the click's mission or quest
    column) through another offerwall in the lookback window."""
    return (
        sa.select(_click.c.id)
        .where(
            _click.c.ip == sa.bindparam("ip"),
            _RECENT,
            offer == sa.bindparam("offer"),
            _click.c.offerwall_id != sa.bindparam("offerwall_id"),
        )
        .limit(1)
    )


_ELSEWHERE = {
    column.name: _clicked_elsewhere(column) for column in (_click.c.mission_id, _click.c.quest_id)
}


def assess(session: Session, completion: Completion, policy: Policy) -> Assessment:
    """The click's signals plus those of the completion itself, judged by the
    offerwall's rules and the mission's own."""
    click = session.execute(_CLICK, {"click_id": completion.click_id}).one()
    signals = [s for s in (click.signals or []) if s in SIGNALS]
    # The completion's time can be claimed early by the game, never later than arrival.
    done_at = min(completion.event_time, completion.arrived_at)
    if completion.min_seconds and done_at - completion.started_at < timedelta(
        seconds=completion.min_seconds
    ):
        signals.append(FAST_COMPLETION)
    stale = timedelta(hours=policy.stale_event_hours)
    if policy.stale_event_hours and completion.arrived_at - completion.event_time > stale:
        signals.append(STALE_EVENT)
    since = completion.arrived_at - LOOKBACK
    if policy.players_per_ip and click.device:
        # Many players at one address is a carrier's NAT; many on one device there is one
        # person or one farm (docs/fraud.md#shared-addresses).
        values = {"ip": click.ip, "device": click.device, "since": since}
        if (session.scalar(_PLAYERS_ON_DEVICE, values) or 0) >= policy.players_per_ip:
            signals.append(SHARED_IP)
    if _elsewhere(session, completion, click.ip, since):
        signals.append(MULTI_OFFERWALL)
    # Both countries known and different: the player clicked from one country and played
    # from another (a VPN at the click, or a farm's clicks for someone else's players).
    if completion.event_country and click.country and completion.event_country != click.country:
        signals.append(COUNTRY_MISMATCH)
    signals = list(dict.fromkeys(signals))
    held = policy.held(signals, click.fraud_actions, completion.mission_actions)
    return Assessment(signals, held, bool(click.review_postbacks))


def _elsewhere(session: Session, completion: Completion, ip: str, since: datetime) -> bool:
    """Whether this offer was clicked through another offerwall from the same address in
    the lookback window: found along the address's clicks, not the offer's (a popular
    offer has tens of thousands a day, bench/conversions.py)."""
    by = "quest_id" if completion.quest_id else "mission_id"
    values = {
        "ip": ip,
        "since": since,
        "offer": completion.quest_id or completion.mission_id,
        "offerwall_id": completion.offerwall_id,
    }
    return session.execute(_ELSEWHERE[by], values).first() is not None
