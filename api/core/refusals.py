"""The refusals a person sees in the portal or the CLI: `DomainError` and its subclasses.

The HTTP API's clients get `ApiError` instead (`api/core/errors.py`), from the use cases
behind the signed and keyed routes; every other use case refuses with a subclass of
`DomainError` (docs/architecture.md#the-house-rules): a message written for the user and,
when the refusal is about one input of a form, that input's name. The portal maps every
subclass the same way in one place (portal/state/auth.py: field errors beside their
field, other refusals as a toast, `SignedOut` to the sign-in page), so a new refusal
needs no new handling in the states.
"""

from __future__ import annotations

from models.schemas import NUL_MESSAGE


def N_(message: str) -> str:
    """Marks a message for the hosted wall's catalogs (`make messages` extracts every
    `N_("…")`); the wall translates it when it shows it."""
    return message


class DomainError(Exception):
    """A refusal the user can act on; `field` names the form input it is about, if any.
    A refusal of a whole form gives every input's problem at once (`several`)."""

    def __init__(self, message: str = "", field: str | None = None):
        super().__init__(message)
        self.field = field
        self._errors: dict[str, str] = {field: message} if field else {}

    @classmethod
    def several(cls, errors: dict[str, str]) -> DomainError:
        """One refusal for all of a form's problems (input name → message)."""
        first, message = next(iter(errors.items()))
        refusal = cls(message, first)
        refusal._errors = dict(errors)
        return refusal

    @property
    def message(self) -> str:
        return str(self)

    def field_errors(self) -> dict[str, str]:
        """The refusal as the form's error dict (empty when it is about no one input)."""
        return dict(self._errors)


class SignedOut(DomainError):
    """The session is missing, ended or expired: the user must sign in again."""

    def __init__(self, message: str = "Sign in to continue."):
        super().__init__(message)


def refuse_nul(values: dict[str, object]) -> None:
    """Refuse the texts of a form that hold a NUL character, each under its input's name:
    PostgreSQL cannot store one, and no user means to type it."""
    bad = {name: NUL_MESSAGE for name, v in values.items() if isinstance(v, str) and "\x00" in v}
    if bad:
        raise DomainError.several(bad)
