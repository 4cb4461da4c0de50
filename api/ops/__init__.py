"""Operating Questwall: health probes (and, as they come, its metrics and logs)."""

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
    "PROBE_PATHS",
    "READYZ",
    "Readiness",
    "drain_on_sigterm",
    "with_probes",
]
