"""Operating Questwall: health probes and Prometheus metrics."""

from api.ops.metrics import (
    METRICS_PATH,
    exposition,
    fresh_metrics_directory,
    route_templates,
    with_metrics,
)
from api.ops.probes import (
    DRAIN_FILE_VARIABLE,
    DRAINING,
    LIVEZ,
    PROBE_PATHS,
    READYZ,
    Readiness,
    drain_on_sigterm,
    with_probes,
)

__all__ = [
    "DRAINING",
    "DRAIN_FILE_VARIABLE",
    "LIVEZ",
    "METRICS_PATH",
    "PROBE_PATHS",
    "READYZ",
    "Readiness",
    "drain_on_sigterm",
    "exposition",
    "fresh_metrics_directory",
    "route_templates",
    "with_metrics",
    "with_probes",
]
