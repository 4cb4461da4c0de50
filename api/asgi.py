"""The API alone, for scaled processes: `questwall api --workers N` (uvicorn api.asgi:app)."""

from api.app import create_api
from api.core.startup import exit_unless_ready
from api.ops import Readiness, route_templates, with_metrics, with_probes

# Settings, database, migrations and master keys, refused in one line before serving.
exit_unless_ready()
api = create_api()
settings = api.state.settings
app = with_probes(
    with_metrics(api, routes=route_templates(api), allow=settings.metrics_allow),
    Readiness(api.state.engine, redis_url=settings.redis_url),
    drain_seconds=settings.drain_seconds,
    detail_allow=settings.metrics_allow,
)
