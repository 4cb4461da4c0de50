"""Postbacks, end to end: the outbox rows written with a conversion, their delivery and
retries, the URL's macros and the `Questwall-Signature` header, the publisher's postback
endpoint (its signing secret and its health), the alerts when deliveries pause, the delivery
log and test postbacks.
"""

from api.postbacks.alerts import AlertSender
from api.postbacks.dispatcher import Dispatcher
from api.postbacks.url import LEGACY, MACROS, unknown_macros

__all__ = [
    "LEGACY",
    "MACROS",
    "AlertSender",
    "Dispatcher",
    "unknown_macros",
]
