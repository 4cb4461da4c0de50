"""The refusal of every economics use case."""

from api.core.refusals import DomainError


class EconomicsError(DomainError, ValueError):
    """A payout rule, promotion or budget refused, with the input it is about."""
