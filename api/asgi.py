"""The API alone, for scaled processes: `questwall api --workers N` (uvicorn api.asgi:app)."""

from api.app import create_api
from api.core.config import get_settings
from api.core.startup import exit_unless_ready
from api.ops import (
    Readiness,
    configure_logging,
    route_templates,
    start_tracing,
    watch_pool,
    with_metrics,
    with_probes,
)

# Settings, database, migrations and master keys, refused in one line before serving.
exit_unless_ready()
# Built in each worker process, after the server forked it: its log handler and its
# trace exporter (a thread) are its own.
configure_logging(get_settings().resolved_log_format, get_settings().log_level)
api = create_api()
settings = api.state.settings
start_tracing(api.state.engine)
watch_pool(api.state.engine)
app = with_probes(
    with_metrics(api, routes=route_templates(api), allow=settings.metrics_allow),
    Readiness(api.state.engine, redis_url=settings.redis_url),
    drain_seconds=settings.drain_seconds,
    detail_allow=settings.metrics_allow,
)
