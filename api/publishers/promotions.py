"""An offerwall's currency sales as the workspace's Promotions page manages them
(docs/publisher-integration.md#promotions): the list in words, a new one from the page's
form, and ending one now. A publisher manages their own offerwall's only, staff any
(`access.offerwall_for` on every call); the rules of a promotion are
`api/economics/promotions.py`'s.

The form's start and end are local date-times (`2026-12-24T18:00`) in the time zone
chosen beside them; they become aware moments here, and the zone is the promotion's
(a weekly one repeats at those local times). Every refused input is named, the
schema's own checks through the mission editor's reader (`forms.from_form`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from sqlmodel import Session

from api.accounts import Account, offerwall_for
from api.core.countries import find_countries, unknown_countries
from api.core.money import multiplier_text
from api.economics import PromotionIn
from api.economics import promotions as sales
from api.missions.forms import FormError, from_form
from models import Promotion
from models.offer_schemas import zone_name

# The form's inputs: PromotionIn's fields, by name.
FIELDS = tuple(PromotionIn.model_fields)
# A check of the whole promotion, shown beside the input it is about.
WHOLE = {
    "The end must be after the start.": "end",
    "A weekly promotion lasts less than a week each time.": "end",
    "Name the countries to exclude.": "countries",
}
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class PromotionLine:
    """A promotion as the Promotions page lists it."""

    id: str
    name: str
    state: str  # running, scheduled, ended
    multiplier: str  # "2×", "1.5×"
    window: str
    countries: str
    first_only: bool
    created_by: str


def _local(moment: datetime, zone: str) -> datetime:
    return moment.astimezone(ZoneInfo(zone))


def window_text(row: Promotion) -> str:
    """When it applies, in its own time zone: "24 Dec 2026, 18:00 – 27 Dec 2026, 23:00
    (Europe/Berlin)", or weekly "Every Friday 18:00–Sunday 23:00 (Europe/Berlin), from
    4 Dec 2026"; and when it was ended early."""
    zone = row.time_zone or "UTC"
    start, end = _local(row.starts_at, zone), _local(row.ends_at, zone)
    if row.weekly:
        to = (
            end.strftime("%H:%M")
            if end.date() == start.date()
            else f"{DAYS[end.weekday()]} {end:%H:%M}"
        )
        text = f"Every {DAYS[start.weekday()]} {start:%H:%M}–{to} ({zone}), from {start:%-d %b %Y}"
    else:
        text = f"{start:%-d %b %Y, %H:%M} – {end:%-d %b %Y, %H:%M} ({zone})"
    if row.ended_at is not None:
        text += f"; ended {_local(row.ended_at, zone):%-d %b %Y, %H:%M}"
    return text


def countries_text(row: Promotion) -> str:
    codes = ", ".join(row.countries or ())
    if not codes:
        return "Every country"
    return f"Every country but {codes}" if row.exclude_countries else f"Only {codes}"


def line(row: Promotion, now: datetime) -> PromotionLine:
    return PromotionLine(
        id=row.id,
        name=row.name,
        state=sales.state(row, now),
        multiplier=f"{multiplier_text(row.multiplier)}×",
        window=window_text(row),
        countries=countries_text(row),
        first_only=bool(row.first_conversion_only),
        created_by=row.created_by,
    )


# The order of the list: what runs now, then what comes, then what is over.
_ORDER = {"running": 0, "scheduled": 1, "ended": 2}


def list_promotions(
    *, session: Session, account: Account, requested: str = "", now: datetime
) -> list[PromotionLine]:
    """The offerwall's promotions, running first, then scheduled, then ended."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    lines = [line(row, now) for row in sales.of_offerwall(session, offerwall.id)]
    return sorted(lines, key=lambda item: _ORDER[item.state])


def _aware(text: str, zone: str) -> str:
    """A local date-time typed in the form, as an aware moment in `zone` (ISO); text that
    is no date-time stays as typed, for the schema to refuse."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(zone))
    return moment.isoformat()


def promotion_in(form: Mapping[str, str]) -> PromotionIn:
    """The promotion the page's form makes; FormError names each refused input."""
    typed = {name: str(form.get(name, "")) for name in FIELDS}
    try:
        zone = zone_name(typed["timeZone"])
    except ValueError:
        zone = "UTC"  # the schema refuses the typed one beside its input
    for name in ("start", "end"):
        typed[name] = _aware(typed[name], zone)
    if typed["countries"].strip():
        found, unknown = find_countries(typed["countries"])
        if unknown:
            raise FormError({"countries": unknown_countries(unknown)})
        typed["countries"] = ", ".join(country.code for country in found)
    try:
        return from_form(PromotionIn, typed)
    except FormError as refused:
        errors: dict[str, str] = {}
        for name, message in refused.errors.items():
            errors.setdefault(WHOLE.get(message, name) if name == "form" else name, message)
        raise FormError(errors) from None


def add_promotion(
    *, session: Session, account: Account, requested: str = "", form: Mapping[str, str]
) -> Promotion:
    """A new promotion of the account's offerwall (staff: the requested one)."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    return sales.add(session, offerwall.id, promotion_in(form), by=account.email)


def end_promotion(
    *, session: Session, account: Account, requested: str = "", promotion_id: str
) -> Promotion:
    """Stop one of the offerwall's promotions now; any other offerwall's is "No such
    promotion", whoever asks."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    return sales.end(session, promotion_id, offerwall_id=offerwall.id)


def ends_in(ends_at: datetime, now: datetime) -> str:
    """How long until `ends_at`, as the wall's countdown starts: "2d 4h", "3h 5m", "4m"."""
    seconds = max(0, int((ends_at.astimezone(UTC) - now.astimezone(UTC)).total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m"
