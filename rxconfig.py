"""Reflex configuration: the portal app lives in portal/portal.py."""

import reflex as rx

from api.core.config import get_settings

# Through the settings, as tracking links read it: BASE_URL from the environment or `.env`.
_settings = get_settings()
_base_url = _settings.base_url
_origins = [_base_url]
if "//localhost:" in _base_url:  # the same machine, reached either way
    _origins.append(_base_url.replace("//localhost:", "//127.0.0.1:"))

config = rx.Config(
    app_name="portal",
    telemetry_enabled=False,
    # The portal accepts calls only from its own origin (docs/contract.md#limits).
    cors_allowed_origins=_origins,
    disable_plugins=[rx.plugins.SitemapPlugin],
    show_built_with_reflex=False,
    # REDIS_URL puts the portal's state in Redis (Reflex's Redis state manager), so several
    # backend processes (`questwall serve --workers N`) serve one browser session alike.
    # Unset: the state lives in the process's memory (REFLEX_REDIS_URL still overrides).
    redis_url=_settings.redis_url or None,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="violet", radius="medium"))],
)
