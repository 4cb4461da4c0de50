"""Events sent by hand over the portal's websocket, as a page's own client sends them: the
browser tests that prove every handler checks, on the server, who may do what."""

from __future__ import annotations

import json

# Records the frames the page sends and receives over the portal's websocket, keeps the
# socket, and marks it connected when the server accepts its connection to Reflex's events'
# namespace (socket.io's packet "40/_event,").
SPY = """
window.__frames = [];
window.__received = [];
class SpySocket extends WebSocket {
  constructor(...args) {
    super(...args);
    window.__socket = this;
    this.addEventListener("message", (e) => {
      const frame = String(e.data);
      // The server accepted this socket's connection to the events' namespace.
      if (frame.startsWith("40/_event,")) window.__connected = this;
      window.__received.push(frame);
    });
  }
  send(data) { window.__frames.push(String(data)); return super.send(data); }
}
window.WebSocket = SpySocket;
"""
REFUSED = "Your account may not do this."


def expect_refusals(page, count: int, text: str = REFUSED) -> None:
    """The server's answers carried the refusal `text` `count` times. Counted in what the
    websocket received (one frame may carry several answers), not in the toasts on screen:
    under load the first toasts are gone before the last come, and a refusal's toast
    replaces the one before it."""
    from playwright.sync_api import TimeoutError as NotInTime

    try:
        page.wait_for_function(
            "([text, n]) => window.__received.join('').split(text).length - 1 >= n",
            arg=[text, count],
        )
    except NotInTime:
        received = page.evaluate("window.__received.join('')")
        raise AssertionError(
            f"{received.count(text)} of {count} answers carried {text!r}; the last frames: "
            + page.evaluate("window.__received.slice(-6).join(' | ')")[-3000:]
        ) from None


def wait_until_connected(page) -> None:
    """Wait for the server to accept the page's connection to its events' namespace. The
    page shows its heading, and its socket is open, before that: the server first runs the
    page's hydrate and on_load, and drops an event that comes in the meantime, without an
    answer (python-socketio ignores events on a namespace still connecting)."""
    page.wait_for_function(
        "() => window.__socket && window.__socket.readyState === 1"
        " && window.__connected === window.__socket"
    )


def send_event(page, handler, payload: dict, path: str) -> None:
    """Send one event as the page's own client would, naming any handler and arguments."""
    event = {
        "name": handler.get_full_name() if hasattr(handler, "get_full_name") else handler,
        "payload": payload,
        "router_data": {"pathname": path.split("?")[0], "asPath": path},
    }
    wait_until_connected(page)
    page.evaluate("f => window.__socket.send(f)", "42/_event," + json.dumps(["event", event]))


def handler_name(state, name: str) -> str:
    return f"{state.get_full_name()}.{name}"


def form(**fields: str) -> dict:
    return {"form": {"__reflex_form_data__": [[k, v] for k, v in fields.items()]}}
