"""Tracking links: the click recorded and its progress started (`clicks`), after the
click screening (`screening`) has let it through.
"""

from api.tracking.clicks import ClickIn, TrackingRefusal, record_click, record_refusal
from api.tracking.screening import ClickScreen, click_screen

__all__ = [
    "ClickIn",
    "ClickScreen",
    "TrackingRefusal",
    "click_screen",
    "record_click",
    "record_refusal",
]
