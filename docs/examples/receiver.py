"""A postback receiver that verifies hash_key (Python 3, standard library only).

QUESTWALL_API_KEY=qw_ak_… HASH_PARAM=hash_key PORT=8080 python receiver.py
"""

import hashlib
import hmac
import os
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl, urlsplit

API_KEY = os.environ["QUESTWALL_API_KEY"]
HASH_PARAM = os.environ.get("HASH_PARAM", "hash_key")  # the parameter your template gave {hash_key}
seen: set[str] = set()  # use your database: postbacks may arrive more than once


def valid(query: str) -> bool:
    pairs = parse_qsl(query, keep_blank_values=True)  # decoded values
    received = dict(pairs).get(HASH_PARAM, "")
    signed = sorted(((k, v) for k, v in pairs if k != HASH_PARAM), key=lambda p: p[0])
    message = "&".join(f"{k}={v}" for k, v in signed) + "&" + API_KEY
    expected = hashlib.sha1(message.encode("utf-8")).hexdigest()  # noqa: S324 (the documented hash)
    return hmac.compare_digest(expected, received.lower())


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        query = urlsplit(self.path).query
        if not valid(query):
            self.send_response(403)
            self.end_headers()
            return
        transaction = dict(parse_qsl(query)).get("tx", "")
        if transaction not in seen:  # credit the user once per transaction_id
            seen.add(transaction)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"OK")


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Handler).serve_forever()
