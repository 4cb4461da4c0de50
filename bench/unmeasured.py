"""The API as `questwall api` serves it (api/asgi.py), without the outer wrappers that
count each request and answer the probes: the reference bench/observability.py measures
what they cost against."""

from __future__ import annotations

from api.app import create_api
from api.core.startup import exit_unless_ready

exit_unless_ready()
app = create_api()
