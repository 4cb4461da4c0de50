"""Reflex configuration: the portal app lives in portal/portal.py."""

import os

import reflex as rx

_base_url = os.environ.get("BASE_URL", "http://localhost:8000").rstrip("/")

config = rx.Config(
    app_name="portal",
    telemetry_enabled=False,
    # The portal accepts calls only from its own origin (SERVICE.md 11).
    cors_allowed_origins=[_base_url],
    disable_plugins=["reflex.plugins.sitemap.SitemapPlugin"],
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(accent_color="violet", radius="medium"))],
)
