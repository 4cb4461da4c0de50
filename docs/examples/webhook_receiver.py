"""A receiver of Questwall's webhooks to your game server (docs/game-integration.md#webhooks),
verifying each message with the Standard Webhooks library (`pip install standardwebhooks`).

WEBHOOK_SECRET=whsec_… PORT=8080 python webhook_receiver.py

During a secret rotation, either the old or the new secret verifies: deploy the new one
within the overlap.
"""

import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

hook = Webhook(os.environ["WEBHOOK_SECRET"])
seen: set[str] = set()  # use your database: a message may arrive more than once


def handle(message: dict) -> None:
    """Your game's part: grant the badge, show the progress, take the reward back."""
    data = message["data"]
    print(message["type"], data.get("userId"), data.get("mission", {}).get("title", ""))


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            message = hook.verify(body, dict(self.headers))  # signature and timestamp
        except WebhookVerificationError:
            self.send_response(400)  # not from Questwall, altered, or too old
            self.end_headers()
            return
        message_id = self.headers["webhook-id"]
        if message_id not in seen:  # the same webhook-id again is a retry: done already
            seen.add(message_id)
            handle(message)
        self.send_response(204)  # any 2xx: delivered
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Receiver).serve_forever()
