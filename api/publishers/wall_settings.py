"""An offerwall's hosted wall settings (docs/publisher-integration.md#theming-and-embedding-the-wall):
its theme (title, logo, accent colour, currency icon), the origins whose pages may frame it,
and whether its links must be signed; the link the publisher copies and how to sign it,
and the theme of the workspace's preview (`preview_theme`).

The portal's Wall page (`save_settings`, for the signed-in account) and `questwall offerwall
wall` (an operator's) both check through `checked_settings`, so the rules hold whoever edits. The framing origins go into the wall's Content-Security-Policy
header (`frame-ancestors`), so anything that could end or extend the header is refused.

Why one module of this size: every rule of the wall's settings (the checks, their normalised
form, the link and how it is signed) sits beside the one function that saves them, so the
portal and the CLI cannot check differently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TypeVar
from urllib.parse import quote, urlencode, urlsplit

from sqlmodel import Session

from api.accounts import Account, offerwall_for
from api.core.crypto import SecretBox, open_api_key
from api.core.refusals import NUL_MESSAGE
from api.publishers.offerwalls import OfferwallError, note_settings
from api.publishers.wall_theme import DEFAULT_ACCENT, Theme, signature
from models import Offerwall
from models.tracking import TEST_UID

T = TypeVar("T")

TITLE_MAX = 80
URL_MAX = 2048
ORIGINS_MAX = 20
ORIGIN_MAX = 255
# The typed inputs, as the portal's form names them and the refusals name them back (the
# sixth setting, require_signature, is a switch).
TYPED_FIELDS = ("title", "logo_url", "accent", "currency_icon", "origins")
# Where a plain http:// origin may frame the wall: the publisher's own machine.
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1"})
DEFAULT_PORTS = {"https": 443, "http": 80}

_COLOUR = re.compile(r"#?([0-9a-f]{3}|[0-9a-f]{6})", re.IGNORECASE)
_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# What can never be inside one origin: it would end the header's directive or add another
# source to it.
_BREAKS_HEADER = re.compile(r"[\s'\";,]")


class WallSettingsError(OfferwallError):
    """Wall settings the rules refuse; each problem under its input's name."""


@dataclass(frozen=True)
class WallSettings:
    """An offerwall's wall settings, as stored (normalised)."""

    title: str = ""
    logo_url: str = ""
    accent: str = DEFAULT_ACCENT
    currency_icon: str = ""
    origins: tuple[str, ...] = ()
    require_signature: bool = False

    @property
    def origins_text(self) -> str:
        """The origins as the form's text area shows them: one per line."""
        return "\n".join(self.origins)


def read_settings(offerwall: Offerwall) -> WallSettings:
    return WallSettings(
        title=offerwall.wall_title or "",
        logo_url=offerwall.wall_logo_url or "",
        accent=offerwall.wall_accent or DEFAULT_ACCENT,
        currency_icon=offerwall.wall_currency_icon or "",
        origins=tuple(offerwall.wall_origins or ()),
        require_signature=bool(offerwall.wall_require_signature),
    )


# --- each input, checked and normalised -------------------------------------------------


def _title(value: str) -> str:
    title = value.strip()
    if "\x00" in title:
        raise ValueError(NUL_MESSAGE)
    if _CONTROL.search(title):
        raise ValueError("The title is one line of text.")
    if len(title) > TITLE_MAX:
        raise ValueError(f"The title is at most {TITLE_MAX} characters ({len(title)} now).")
    return title


def _image_url(value: str, what: str) -> str:
    """An image address: empty, or an http(s) URL with a host (https is better: an http
    image is not shown on an https page)."""
    url = value.strip()
    if not url:
        return ""
    if "\x00" in url:
        raise ValueError(NUL_MESSAGE)
    if len(url) > URL_MAX:
        raise ValueError(f"The {what} is at most {URL_MAX} characters.")
    if _CONTROL.search(url) or re.search(r"\s", url):
        raise ValueError(f"The {what} cannot hold spaces or line breaks.")
    try:
        parts = urlsplit(url)
        web = parts.scheme.lower() in ("https", "http") and bool(parts.hostname)
    except ValueError:  # a port that is no number, a broken IPv6 address
        web = False
    if not web:
        raise ValueError(
            f"The {what} must start with https:// (or http://), "
            "e.g. https://cdn.example.com/logo.png."
        )
    return url


def normalised_accent(value: str) -> str:
    """#rrggbb in lower case from "#RRGGBB", "rrggbb", "#rgb" or "rgb"; empty is the default
    colour. ValueError for anything else."""
    text = value.strip()
    if not text:
        return DEFAULT_ACCENT
    found = _COLOUR.fullmatch(text)
    if found is None:
        raise ValueError("The accent colour is a hex colour such as #4f46e5.")
    digits = found.group(1).lower()
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return "#" + digits


def split_origins(value: str | Iterable[str]) -> list[str]:
    """The origins of the form's text (one per line, or separated by commas) or of a list
    (each item one origin), stripped, empty ones left out."""
    if isinstance(value, str):
        items = [part for line in value.splitlines() for part in line.split(",")]
    else:
        items = list(value)
    return [item.strip() for item in items if item.strip()]


def normalised_origin(value: str) -> str:
    """One origin that may frame the wall: https://host[:port], https://*.host (any
    subdomain) or http://localhost[:port]; the host in lower case, no default port, no
    trailing slash. ValueError names what is wrong."""
    shown = value if len(value) <= 60 else value[:57] + "…"
    if "\x00" in value:
        raise ValueError(NUL_MESSAGE)
    if len(value) > ORIGIN_MAX:
        raise ValueError(f"An origin is at most {ORIGIN_MAX} characters.")
    if _BREAKS_HEADER.search(value) or _CONTROL.search(value):
        raise ValueError(
            f'"{shown}" holds a space, quote, comma or semicolon: write one origin per line, '
            "such as https://games.example.com."
        )
    scheme, sep, rest = value.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("https", "http"):
        raise ValueError(f'"{shown}" is not an origin: start it with https://.')
    if rest.endswith("/"):
        rest = rest[:-1]
    if any(mark in rest for mark in "/?#"):
        raise ValueError(
            f'"{shown}" is not an origin: leave out the path, query and fragment '
            "(only https://host, or https://host:port)."
        )
    if "@" in rest:
        raise ValueError(f'"{shown}" is not an origin: leave out the user name.')
    host, colon, port_text = rest.rpartition(":") if ":" in rest else (rest, "", "")
    host = host.lower()
    port: int | None = None
    if colon:
        if not (port_text.isascii() and port_text.isdigit() and 1 <= int(port_text) <= 65535):
            raise ValueError(f'"{shown}" has no valid port (1 to 65535).')
        port = int(port_text)
    wildcard = host.startswith("*.")
    name = host[2:] if wildcard else host
    if "*" in name:
        raise ValueError(
            f'"{shown}": a wildcard may only stand for subdomains at the start, '
            "as in https://*.example.com."
        )
    if not name.isascii():
        raise ValueError(f'"{shown}": write an international domain name in its xn-- form.')
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f'"{shown}" has no valid host name.')
    if wildcard and len(labels) < 2:
        raise ValueError(f'"{shown}": a wildcard needs a domain under it, as in *.example.com.')
    if scheme == "http" and (wildcard or name not in LOCAL_HOSTS):
        raise ValueError(
            f'"{shown}": use https:// (http:// is only for localhost, while you develop).'
        )
    if port == DEFAULT_PORTS[scheme]:
        port = None
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def normalised_origins(value: str | Iterable[str]) -> tuple[str, ...]:
    """Every origin normalised, duplicates dropped (first one kept), at most 20."""
    seen: dict[str, None] = {}
    for item in split_origins(value):
        seen.setdefault(normalised_origin(item), None)
    if len(seen) > ORIGINS_MAX:
        raise ValueError(
            f"At most {ORIGINS_MAX} origins may frame the wall ({len(seen)} given); "
            "a wildcard such as https://*.example.com covers every subdomain."
        )
    return tuple(seen)


def checked_settings(
    *,
    title: str = "",
    logo_url: str = "",
    accent: str = "",
    currency_icon: str = "",
    origins: str | Iterable[str] = (),
    require_signature: bool = False,
) -> WallSettings:
    """The settings as they are stored, or WallSettingsError naming every input's problem
    at once."""
    errors: dict[str, str] = {}

    def attempt(name: str, check: Callable[[], T], fallback: T) -> T:
        try:
            return check()
        except ValueError as exc:
            errors[name] = str(exc)
            return fallback

    wanted = WallSettings(
        title=attempt("title", lambda: _title(title), ""),
        logo_url=attempt("logo_url", lambda: _image_url(logo_url, "logo URL"), ""),
        accent=attempt("accent", lambda: normalised_accent(accent), DEFAULT_ACCENT),
        currency_icon=attempt(
            "currency_icon", lambda: _image_url(currency_icon, "currency icon URL"), ""
        ),
        origins=attempt("origins", lambda: normalised_origins(origins), ()),
        require_signature=bool(require_signature),
    )
    if errors:
        raise WallSettingsError.several(errors)
    return wanted


# --- who may read and save them -------------------------------------------------------


def settings_for(*, session: Session, account: Account | None, requested: str = "") -> WallSettings:
    """The wall settings of the account's offerwall (staff: the requested one)."""
    return read_settings(offerwall_for(session=session, account=account, requested=requested))


def save_settings(
    *,
    session: Session,
    account: Account | None,
    requested: str = "",
    title: str = "",
    logo_url: str = "",
    accent: str = "",
    currency_icon: str = "",
    origins: str | Iterable[str] = (),
    require_signature: bool = False,
) -> WallSettings:
    """Check and save the account's offerwall's wall settings (staff: the requested
    offerwall's). Raises Forbidden, NotApproved or WallSettingsError."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    wanted = checked_settings(
        title=title,
        logo_url=logo_url,
        accent=accent,
        currency_icon=currency_icon,
        origins=origins,
        require_signature=require_signature,
    )
    return store(session=session, offerwall=offerwall, wanted=wanted)


def store(*, session: Session, offerwall: Offerwall, wanted: WallSettings) -> WallSettings:
    """Save settings already checked (`checked_settings`) on an offerwall already chosen."""
    note_settings(
        session,
        offerwall,
        "offerwall.wall_settings_changed",
        asdict(read_settings(offerwall)),
        asdict(wanted),
    )
    offerwall.wall_title = wanted.title
    offerwall.wall_logo_url = wanted.logo_url
    offerwall.wall_accent = wanted.accent
    offerwall.wall_currency_icon = wanted.currency_icon
    offerwall.wall_origins = list(wanted.origins)
    offerwall.wall_require_signature = wanted.require_signature
    session.add(offerwall)
    session.flush()
    return read_settings(offerwall)


# --- the link, the iframe, the preview -------------------------------------------------


def wall_link(*, base_url: str, owid: str, require_signature: bool) -> str:
    """The wall's link as the publisher copies it: {uid} (and {sig}) to fill in."""
    link = f"{base_url.rstrip('/')}/wall?owid={quote(owid, safe='')}&uid={{uid}}"
    return link + "&sig={sig}" if require_signature else link


def iframe_snippet(link: str) -> str:
    """An iframe that shows the wall inside a page of one of the allowed origins."""
    return (
        f'<iframe src="{link}" title="Offers" width="100%" height="720" '
        'style="border:0" loading="lazy"></iframe>'
    )


def link_for(*, base_url: str, offerwall: Offerwall) -> str:
    """The saved wall's link; empty while the offerwall has no owid (not approved yet)."""
    if not offerwall.owid:
        return ""
    return wall_link(
        base_url=base_url,
        owid=offerwall.owid,
        require_signature=bool(offerwall.wall_require_signature),
    )


# --- the test player ----------------------------------------------------------------


def test_player_link(*, base_url: str, box: SecretBox, offerwall: Offerwall) -> str:
    """The wall as the offerwall's test player (`TEST_UID`) sees it, always signed (so it
    opens whether or not links must be signed); empty while the offerwall has no key."""
    if not offerwall.owid or not offerwall.api_key_sealed:
        return ""
    api_key = open_api_key(box, offerwall.api_key_sealed, owid=offerwall.owid)
    query = {
        "owid": offerwall.owid,
        "uid": TEST_UID,
        "sig": signature(api_key, offerwall.owid, TEST_UID),
    }
    return f"{base_url.rstrip('/')}/wall?{urlencode(query)}"


def set_test_postbacks(
    *, session: Session, account: Account | None, requested: str = "", send: bool
) -> bool:
    """Whether the test player's conversions send postbacks, for the account's offerwall
    (staff: the requested one). Raises Forbidden or NotApproved."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    note_settings(
        session,
        offerwall,
        "offerwall.test_postbacks_changed",
        {"test_postbacks": offerwall.test_postbacks},
        {"test_postbacks": send},
    )
    offerwall.test_postbacks = send
    session.add(offerwall)
    session.flush()
    return offerwall.test_postbacks


def _or(check: Callable[[str], str], value: str, fallback: str) -> str:
    try:
        return check(value)
    except ValueError:
        return fallback


def preview_theme(
    offerwall: Offerwall, *, title: str, logo_url: str, accent: str, currency_icon: str
) -> Theme:
    """The wall's theme with these (unsaved) values and the offerwall's currency, for the
    workspace's preview (the wall draws it: `api/wall/page.py`, `preview_html`). An image
    address or colour that would be refused shows as the saved one (a half-typed colour
    does not flash another)."""
    saved = read_settings(offerwall)
    typed_title = _CONTROL.sub(" ", title).strip()[:TITLE_MAX]
    return Theme(
        title=typed_title or offerwall.name,
        logo_url=_or(lambda v: _image_url(v, "logo URL"), logo_url, saved.logo_url),
        accent=_or(normalised_accent, accent, saved.accent),
        currency_icon=_or(
            lambda v: _image_url(v, "currency icon URL"), currency_icon, saved.currency_icon
        ),
        currency_name=offerwall.currency_name,
    )


# --- signing the link, in the publisher's language -------------------------------------


def signing_examples(*, base_url: str, owid: str) -> dict[str, str]:
    """How a publisher's server signs a wall link: Python, Node.js and PHP, each a function
    that returns the link for one player (the docs show the same code)."""
    wall = f"{base_url.rstrip('/')}/wall"
    return {
        "Python": (
            "import hashlib\n"
            "import hmac\n"
            "from urllib.parse import urlencode\n"
            "\n"
            "\n"
            "def wall_link(api_key: str, uid: str) -> str:\n"
            f'    owid = "{owid}"\n'
            "    sig = hmac.new(api_key.encode(), (owid + uid).encode(), hashlib.sha256).hexdigest()\n"
            f'    return "{wall}?" + urlencode({{"owid": owid, "uid": uid, "sig": sig}})\n'
        ),
        "Node.js": (
            'import { createHmac } from "node:crypto";\n'
            "\n"
            "export function wallLink(apiKey, uid) {\n"
            f'  const owid = "{owid}";\n'
            '  const sig = createHmac("sha256", apiKey).update(owid + uid).digest("hex");\n'
            f'  return "{wall}?" + new URLSearchParams({{ owid, uid, sig }});\n'
            "}\n"
        ),
        "PHP": (
            "function wall_link(string $apiKey, string $uid): string {\n"
            f"    $owid = '{owid}';\n"
            "    $sig = hash_hmac('sha256', $owid . $uid, $apiKey);\n"
            f"    return '{wall}?' . http_build_query(['owid' => $owid, 'uid' => $uid, 'sig' => $sig]);\n"
            "}\n"
        ),
    }
