"""The `questwall` command: one group per entity, in one module of this package per context
it drives (the modules follow the contexts' names, the commands keep their own):
`studios.py` (`game`, `credential`: games and credentials), `publishers.py` (`offerwall`),
`missions.py` (`offers`), `conversions.py` (`conversion`: finding and reversing
conversions), `economics.py` (`offerwall promotion`, `offerwall payout-rule`, `game budget`), `fraud.py` (the review queue, fraud rules and the blocklist), `accounts.py`
(`user`: portal accounts), `audit.py` (`audit verify`, `audit list`) and `server.py` (migrate, serve, api, worker, prune,
rotate-secrets, demo); `common.py` holds what they share.
"""

from __future__ import annotations

import click

from api.audit import acting_as, cli_actor
from api.cli import (
    accounts,
    audit,
    conversions,
    economics,
    fraud,
    missions,
    publishers,
    server,
    studios,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def main(ctx: click.Context) -> None:
    """Questwall: game events, missions and quests, offerwalls and postbacks."""
    # What a command changes, the operating-system user who ran it did (the audit trail).
    ctx.with_resource(acting_as(cli_actor()))


for _command in (
    server.migrate_cmd,
    studios.game_group,
    studios.credential_group,
    publishers.offerwall_group,
    missions.offers_group,
    conversions.conversion_group,
    fraud.fraud_group,
    accounts.user_group,
    audit.audit_group,
    server.demo_cmd,
    server.prune_cmd,
    server.rotate_secrets_cmd,
    server.worker_cmd,
    server.serve,
    server.api_cmd,
):
    main.add_command(_command)
publishers.offerwall_group.add_command(economics.promotion_group)
publishers.offerwall_group.add_command(economics.payout_rule_group)
studios.game_group.add_command(economics.game_budget)
