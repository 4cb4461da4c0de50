"""The API alone, for scaled processes: `questwall api --workers N` (uvicorn api.asgi:app)."""

from api.app import create_api
from api.core.startup import exit_unless_ready

# Settings, database, migrations and master keys, refused in one line before serving.
exit_unless_ready()
app = create_api()
