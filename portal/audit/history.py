"""The History of a game, a mission or a publisher, and a publisher's or a studio's
Security log: the events of one object, for whoever may see it."""

from __future__ import annotations

import reflex as rx

from portal import routes
from portal.audit.events import events_card
from portal.audit.history_state import (
    GameHistoryState,
    OfferwallHistoryState,
    PublisherSecurityState,
    StudioSecurityState,
)
from portal.components.game_tabs import game_tabs
from portal.components.layout import page
from portal.components.workspace import workspace_tabs


def game_history() -> rx.Component:
    s = GameHistoryState
    return page(
        rx.cond(s.mission_id != "", "History of " + s.mission_name, s.game_name),
        game_tabs(s, routes.GAME_HISTORY),
        rx.cond(
            s.mission_id != "",
            rx.link(
                "← Back to the mission", href=routes.mission(s.game_id, s.mission_id), size="2"
            ),
        ),
        events_card(
            s,
            heading="History",
            intro=rx.cond(
                s.mission_id != "",
                "Changes to this mission, newest first.",
                "Changes to this game, newest first.",
            ),
            empty="No change has been recorded here yet.",
        ),
    )


def offerwall_history() -> rx.Component:
    s = OfferwallHistoryState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_HISTORY),
        events_card(
            s,
            heading="History",
            intro="Changes to this offerwall and within it (its status, URLs, key, "
            "payout rules and conversion decisions), newest first.",
            empty="No change has been recorded here yet.",
        ),
    )


def publisher_security() -> rx.Component:
    s = PublisherSecurityState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_SECURITY),
        events_card(
            s,
            heading="Security log",
            intro="What happened to this publisher's accounts (sign-ins, passwords, "
            "sessions) and what they changed, newest first.",
            empty="Nothing has been recorded about these accounts yet.",
        ),
    )


def studio_security() -> rx.Component:
    s = StudioSecurityState
    return page(
        "Security log",
        events_card(
            s,
            heading=s.studio_name,
            intro="What happened to this studio's accounts (sign-ins, passwords, "
            "sessions) and what they changed, newest first.",
            empty="Nothing has been recorded about these accounts yet.",
        ),
    )
