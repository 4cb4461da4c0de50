"""The API alone, for scaled processes: `questwall api --workers N` (uvicorn api.asgi:app)."""

from api.app import create_api
from api.core.db import ensure_migrated

ensure_migrated()
app = create_api()
