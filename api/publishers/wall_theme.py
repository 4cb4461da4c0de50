"""How an offerwall's hosted wall looks and how its links are signed
(docs/publisher-integration.md#theming-and-embedding-the-wall): the theme the publisher sets
in the workspace, its default accent colour, and the `sig` of a wall link. The wall's pages
(`api/wall/page.py`) draw the theme and check the signature; the wall settings
(`api/publishers/wall_settings.py`) store the theme and sign the test player's link.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

DEFAULT_ACCENT = "#4f46e5"
_ACCENT = re.compile(r"^#[0-9a-fA-F]{6}$")


def safe_image(url: str | None) -> str:
    """An image address the page may show: http(s) only, else nothing."""
    url = (url or "").strip()
    return url if url.lower().startswith(("https://", "http://")) else ""


@dataclass(frozen=True)
class Theme:
    """How an offerwall's wall looks: set in the publisher's workspace."""

    title: str
    logo_url: str = ""
    accent: str = DEFAULT_ACCENT
    currency_icon: str = ""
    currency_name: str = "US Dollar"

    def __post_init__(self) -> None:
        # Only a #rrggbb colour reaches the stylesheet.
        if not _ACCENT.match(self.accent or ""):
            object.__setattr__(self, "accent", DEFAULT_ACCENT)
        object.__setattr__(self, "logo_url", safe_image(self.logo_url))
        object.__setattr__(self, "currency_icon", safe_image(self.currency_icon))


def signature(api_key: str, owid: str, uid: str) -> str:
    """The `sig` of a wall link: hex HMAC-SHA256 over owid + uid, keyed with the API key."""
    return hmac.new(api_key.encode(), (owid + uid).encode(), hashlib.sha256).hexdigest()
