"""The mail outbox: every message stored in its action's transaction, then sent, retried
and given up from the table.
"""

from api.mail.outbox import MailSender

__all__ = [
    "MailSender",
]
