"""`questwall user …`: portal accounts."""

from __future__ import annotations

import sys

import click

from api.cli.common import _require_ready
from api.core.config import get_settings
from api.core.db import write_session


@click.group("user")
def user_group() -> None:
    """Portal accounts (the first staff account comes from here)."""


@user_group.command("create-staff")
@click.argument("email")
@click.option("--name", default="", help="Display name.")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from standard input instead of prompting (for scripts).",
)
def user_create_staff(email: str, name: str, password_stdin: bool) -> None:
    """Create a staff account; the password is prompted for (never an argument)."""
    from api.accounts import AccountError, create_user
    from models import Role

    _require_ready()
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        with write_session() as session:
            user = create_user(
                session=session, email=email, password=password, role=Role.STAFF, name=name
            )
            created = user.email
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Staff account {created} created. Sign in at {get_settings().base_url}/login.")


@user_group.command("mfa-reset")
@click.argument("email")
def user_mfa_reset(email: str) -> None:
    """Clear an account's two-factor sign-in (its app and its recovery codes), for an
    owner who lost both: its next sign-in asks for the password only."""
    from sqlmodel import col, select

    from api.accounts import totp
    from models import User

    _require_ready()
    address = email.strip().lower()
    with write_session() as session:
        user = session.exec(select(User).where(col(User.email) == address)).first()
        if user is None:
            raise click.ClickException(f"No account uses {address}.")
        cleared = totp.reset(session=session, user=user)
    if cleared:
        click.echo(f"Two-factor sign-in of {address} is off; it signs in with its password.")
    else:
        click.echo(f"{address} has no two-factor sign-in; nothing changed.")
