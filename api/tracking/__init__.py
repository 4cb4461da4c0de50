"""Tracking links: the click recorded and its progress started (`clicks`), after the
click screening (`screening`) has let it through.
"""

from api.tracking.clicks import (
    ClickIn,
    ScreenedClick,
    Tracked,
    TrackingRefusal,
    record_click,
    record_clicks_together,
    record_refusal,
)
from api.tracking.screening import ClickScreen, click_screen

__all__ = [
    "ClickIn",
    "ClickScreen",
    "ScreenedClick",
    "Tracked",
    "TrackingRefusal",
    "click_screen",
    "record_click",
    "record_clicks_together",
    "record_refusal",
]
