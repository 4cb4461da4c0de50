"""Security headers on every HTTP answer: API JSON, tracking links, portal pages and assets.

The FastAPI app is the outer ASGI app and the Reflex portal is mounted behind it, so one
middleware around the FastAPI app covers everything the server answers. It is a pure ASGI
middleware (it only rewrites the headers of `http.response.start`), so streaming bodies pass
through untouched, and it leaves websocket and lifespan scopes alone: the portal's event
websocket is never touched. docs/architecture.md ("Security headers") explains each part of
the Content-Security-Policy.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from secure import (
    ContentSecurityPolicy,
    ReferrerPolicy,
    Secure,
    StrictTransportSecurity,
    XContentTypeOptions,
    XFrameOptions,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.core.config import Settings

# One year; no includeSubDomains: other hosts under the same domain are not ours to pin.
HSTS_MAX_AGE = 365 * 24 * 3600

SELF = "'self'"
# The hosted wall (api/routes/wall.py) answers with its own Content-Security-Policy.
WALL_PATH = "/wall"
CSP = b"content-security-policy"
OWN_FRAMING = frozenset({CSP, b"x-frame-options"})
NONE = "'none'"


class _InlineScripts(HTMLParser):
    """Collects the text of every <script> without a `src` (inline scripts)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[str] = []
        self._current: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script" and not any(name == "src" for name, _ in attrs):
            self._current = []

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._current.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._current is not None:
            self.scripts.append("".join(self._current))
            self._current = None


def inline_script_hashes(build_dir: Path) -> list[str]:
    """The CSP hash sources (`'sha256-…'`) of the inline scripts of every built portal page.

    The production build prerenders each page to static HTML with a few small inline
    scripts (React Router's context and module imports, the color-mode bootstrap). Their
    text is fixed at build time, so allowing exactly their hashes lets them run while any
    other inline script (an injection) is refused. Sorted, so the header is stable.
    """
    hashes: set[str] = set()
    for page in build_dir.rglob("*.html"):
        parser = _InlineScripts()
        parser.feed(page.read_text(encoding="utf-8"))
        for script in parser.scripts:
            digest = hashlib.sha256(script.encode("utf-8")).digest()
            hashes.add(f"'sha256-{base64.b64encode(digest).decode()}'")
    return sorted(hashes)


def websocket_origin(base_url: str) -> str:
    """The origin of the portal's event websocket: BASE_URL's origin with ws:/wss:."""
    scheme, _, rest = base_url.partition("://")
    host = rest.split("/", 1)[0]
    return f"{'wss' if scheme == 'https' else 'ws'}://{host}"


def portal_csp(*, base_url: str, script_hashes: list[str]) -> ContentSecurityPolicy:
    """The policy of every answer but the API reference: as strict as the portal allows."""
    return (
        ContentSecurityPolicy()
        .default_src(SELF)
        # Hashes for the build's inline scripts; 'unsafe-eval' because Reflex runs the
        # client-side actions a server event sends (toasts, clipboard) through eval().
        .script_src(SELF, "'unsafe-eval'", *script_hashes)
        # Emotion inserts <style> elements and Radix sets style attributes at run time.
        .style_src(SELF, "'unsafe-inline'")
        # Offer thumbnails (the editors' preview, the publisher's offer catalog) are the
        # designers' own https URLs.
        .img_src(SELF, "https:")
        .font_src(SELF)
        # 'self' covers the websocket in current browsers; the explicit origin older ones.
        .connect_src(SELF, websocket_origin(base_url))
        .object_src(NONE)
        .base_uri(SELF)
        .form_action(SELF)
        .frame_ancestors(NONE)
    )


def docs_csp() -> ContentSecurityPolicy:
    """The API reference's own policy: Swagger UI's files come from this server, but the
    page starts it with an inline script and it sets inline styles and data: images."""
    return (
        ContentSecurityPolicy()
        .default_src(SELF)
        .script_src(SELF, "'unsafe-inline'")
        .style_src(SELF, "'unsafe-inline'")
        .img_src(SELF, "data:")
        .connect_src(SELF)
        .object_src(NONE)
        .base_uri(SELF)
        .form_action(SELF)
        .frame_ancestors(NONE)
    )


def header_policy(csp: ContentSecurityPolicy, *, https: bool) -> Secure:
    """Every security header, around one Content-Security-Policy."""
    return Secure(
        csp=csp,
        hsts=StrictTransportSecurity().max_age(HSTS_MAX_AGE) if https else None,
        xfo=XFrameOptions().deny(),
        xcto=XContentTypeOptions().nosniff(),
        # The origin only, and only over HTTPS: a tracking link's query (uid, clickid)
        # never reaches the destination in a Referer, and redirects work as before.
        referrer=ReferrerPolicy().strict_origin_when_cross_origin(),
    )


def portal_build_dir() -> Path:
    """Where the production build of the portal keeps its pages (Reflex's layout)."""
    from reflex.utils.prerequisites import get_web_dir
    from reflex_base.constants import Dirs

    return get_web_dir() / Dirs.STATIC


Headers = list[tuple[bytes, bytes]]


def encoded_headers(policy: Secure) -> tuple[Headers, frozenset[bytes]]:
    """The policy's headers as ASGI wants them, and their names, encoded once: `secure`
    renders every value again each time its `headers` are read."""
    headers = [
        (name.lower().encode("ascii"), value.encode("latin-1"))
        for name, value in policy.headers.items()
    ]
    return headers, frozenset(name for name, _ in headers)


class SecurityHeaders:
    """Pure ASGI middleware that sets the security headers on every HTTP answer.

    Each header replaces any of the same name the app set. The portal's policy carries
    the hashes of the built pages' inline scripts. The build may be (re)made after the
    app object exists (`questwall serve` builds, then serves), so the hashes are read
    again when the build's index page changes: looked at once a second at most
    (`RECHECK_SECONDS`), not on every request.
    """

    RECHECK_SECONDS = 1.0

    def __init__(
        self,
        app: ASGIApp,
        *,
        base_url: str,
        docs_path: str | None,
        build_dir: Callable[[], Path] = portal_build_dir,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.clock = clock
        self.base_url = base_url
        self.https = base_url.startswith("https://")
        self.docs_path = docs_path
        self._find_build_dir = build_dir
        self._build_dir: Path | None = None
        self._docs = encoded_headers(header_policy(docs_csp(), https=self.https))
        self._portal: tuple[float | None, tuple[Headers, frozenset[bytes]]] | None = None
        self._recheck_at = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # websockets and lifespan pass untouched
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        ours, names = self._docs if path == self.docs_path else self._portal_headers()
        framable = path == WALL_PATH or path.startswith(WALL_PATH + "/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers, replaced = ours, names
                if framable and any(k.lower() == CSP for k, _ in message.get("headers", ())):
                    # The hosted wall sets its own policy: frame-ancestors names the
                    # origins its offerwall allows, which X-Frame-Options cannot say.
                    replaced = names - OWN_FRAMING
                    headers = [(k, v) for k, v in ours if k not in OWN_FRAMING]
                kept = [(k, v) for k, v in message.get("headers", ()) if k.lower() not in replaced]
                message["headers"] = kept + headers
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _portal_headers(self) -> tuple[Headers, frozenset[bytes]]:
        now = self.clock()
        if self._portal is not None and now < self._recheck_at:
            return self._portal[1]
        self._recheck_at = now + self.RECHECK_SECONDS
        if self._build_dir is None:
            self._build_dir = self._find_build_dir()
        build_dir = self._build_dir
        try:
            stamp: float | None = (build_dir / "index.html").stat().st_mtime
        except OSError:  # no build: the API alone, or tests
            stamp = None
        if self._portal is None or self._portal[0] != stamp:
            hashes = inline_script_hashes(build_dir) if stamp is not None else []
            csp = portal_csp(base_url=self.base_url, script_hashes=hashes)
            self._portal = (stamp, encoded_headers(header_policy(csp, https=self.https)))
        return self._portal[1]


def install_security_headers(
    app: FastAPI, settings: Settings, *, docs_path: str | None, **options: Any
) -> None:
    """Wrap the whole app, its error layer included, in `SecurityHeaders`.

    `add_middleware` would place it inside Starlette's outermost error middleware, so the
    500 answer of an unexpected fault would go out without the headers; wrapping the built
    stack puts it outside everything.
    """
    build = app.build_middleware_stack

    def build_with_headers() -> ASGIApp:
        return SecurityHeaders(build(), base_url=settings.base_url, docs_path=docs_path, **options)

    app.build_middleware_stack = build_with_headers  # type: ignore[method-assign]
