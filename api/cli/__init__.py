"""The `questwall` command: one group per entity, each in its own module of this package.

`games.py` (games and credentials), `offerwalls.py`, `offers.py`, `conversions.py`
(finding and reversing conversions), `fraud.py` (the review queue, fraud rules and the
blocklist), `users.py` (portal accounts) and `server.py` (migrate,
serve, api, worker, prune, rotate-secrets, demo); `common.py` holds what they share.
"""

from __future__ import annotations

import click

from api.cli import conversions, fraud, games, offers, offerwalls, server, users


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Questwall: game events, missions and quests, offerwalls and postbacks."""


for _command in (
    server.migrate_cmd,
    games.game_group,
    games.credential_group,
    offerwalls.offerwall_group,
    offers.offers_group,
    conversions.conversion_group,
    fraud.fraud_group,
    users.user_group,
    server.demo_cmd,
    server.prune_cmd,
    server.rotate_secrets_cmd,
    server.worker_cmd,
    server.serve,
    server.api_cmd,
):
    main.add_command(_command)
