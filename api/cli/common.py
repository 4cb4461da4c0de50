"""What every `questwall` command group shares: JSON output and the start checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from api.core.startup import StartRefused, check_ready


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


@contextmanager
def _refusals() -> Iterator[None]:
    """A refusal to start is one line on stderr and exit status 1, never a traceback."""
    try:
        yield
    except StartRefused as exc:
        raise click.ClickException(str(exc)) from None


def _require_ready() -> None:
    """Settings, database, migrations and master keys, checked before any command uses them."""
    with _refusals():
        check_ready()
