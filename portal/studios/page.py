"""Studios (staff), games and their credentials (designers). Their states are
portal/studios/state.py (staff's studios) and portal/studios/games_state.py (games and
credentials, and GameScoped, which every per-game page's state builds on)."""

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button, form_dialog
from portal.components.forms import (
    field,
    field_error,
    form_error,
    native_select,
    submission_count,
)
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.state.auth import AuthState
from portal.studios.games_state import GamesState, GameState
from portal.studios.state import DESIGNER_FORM, STUDIO_FORM, StudioState


def studios() -> rx.Component:
    s = StudioState
    return page(
        "Studios",
        rx.grid(
            card(
                rx.heading("New studio", size="4", as_="h2"),
                rx.form(
                    rx.vstack(
                        field("Studio name", "name", errors=s.studio_errors),
                        submission_count(),
                        rx.button("Create studio", type="submit"),
                        width="100%",
                    ),
                    on_submit=s.create_studio,
                    # Emptied by the state once created: a refused form keeps what was typed.
                    id=STUDIO_FORM,
                ),
            ),
            card(
                rx.heading("New designer", size="4", as_="h2"),
                rx.form(
                    rx.vstack(
                        rx.el.label(
                            rx.text("Studio", size="2", weight="medium"), html_for="studio"
                        ),
                        native_select(
                            rx.foreach(s.rows, lambda r: rx.el.option(r.name, value=r.id)),
                            name="studio",
                            id="studio",
                            required=True,
                            width="100%",
                        ),
                        field("Name", "designer_name", required=False),
                        field("Email", "email", type="email", errors=s.designer_errors),
                        field(
                            "Initial password",
                            "password",
                            type="password",
                            errors=s.designer_errors,
                            hint="Give it to the designer over a safe channel.",
                        ),
                        submission_count(),
                        rx.button("Create designer", type="submit"),
                        width="100%",
                    ),
                    on_submit=s.add_designer,
                    id=DESIGNER_FORM,
                ),
            ),
            columns=rx.breakpoints(initial="1", md="2"),
            spacing="4",
            width="100%",
        ),
        card(
            rx.cond(
                s.rows.length() > 0,
                data_table(
                    ("Studio", "Designers", "Games", ""),
                    s.rows,
                    lambda r: [
                        r.name,
                        r.designers,
                        r.games,
                        rx.hstack(
                            rx.button(
                                "Rename",
                                size="1",
                                variant="soft",
                                on_click=s.start_rename(r.id, r.name),
                            ),
                            rx.link("Security log", href=routes.studio_security(r.id), size="2"),
                            spacing="3",
                            align="center",
                            wrap="wrap",
                        ),
                    ],
                    test_id="studio-row",
                ),
                empty_state("building", "No studios yet", "Create one, then its designers."),
            )
        ),
        _rename_dialog(),
    )


def _rename_dialog() -> rx.Component:
    s = StudioState
    return form_dialog(
        form_error(s.rename_errors.get("form", "").to(str)),
        field(
            "New name",
            "name",
            id="rename-studio-name",
            errors=s.rename_errors,
            default_value=s.renaming_name,
            auto_focus=True,
        ),
        title="Rename " + s.renaming_name,
        open=s.renaming_id != "",
        submit="Rename",
        on_submit=s.rename,
        on_cancel=s.cancel_rename,
    )


def games() -> rx.Component:
    s = GamesState
    return page(
        "Games",
        rx.cond(
            AuthState.user_role == "designer",
            rx.link("Your studio's security log", href=routes.STUDIO_SECURITY, size="2"),
        ),
        rx.cond(
            s.can_create,
            card(
                rx.heading("New game", size="4", as_="h2"),
                rx.form(
                    rx.vstack(
                        form_error(s.error),
                        rx.hstack(
                            rx.input(
                                name="name",
                                placeholder="Game name",
                                required=True,
                                aria_label="Game name",
                                size="2",
                                width="320px",
                                max_width="100%",
                            ),
                            submission_count(),
                            rx.button("Create game", type="submit", size="2", loading=s.creating),
                            wrap="wrap",
                        ),
                        width="100%",
                    ),
                    on_submit=s.create,
                ),
            ),
        ),
        card(
            rx.cond(
                s.rows.length() > 0,
                data_table(
                    ("Game", "Studio", "Live credentials", "Created"),
                    s.rows,
                    lambda g: [
                        rx.link(g.name, href=routes.game(g.id)),
                        g.studio,
                        g.live_credentials,
                        g.created_at,
                    ],
                    test_id="game-row",
                ),
                empty_state("gamepad-2", "No games yet", "Create your studio's first game above."),
            )
        ),
    )


def _curl(client_id: rx.Var, secret: rx.Var) -> rx.Var:
    return (
        "CLIENT_ID="
        + client_id
        + "; SECRET="
        + secret
        + "; GAME_ID="
        + GameState.game_id
        + "\n"
        + 'BODY=\'{"gameId":"\'$GAME_ID\'","identifiers":[],"events":[{"userId":"p1",'
        + '"event":"GAME_OVER","time":"\'$(date -u +%FT%T.000Z)\'","value":1200}]}\'\n'
        + "TS=$(date +%s%3N)\n"
        + "SIG=$(printf '%s' \"$CLIENT_ID$TS$BODY\" | openssl dgst -sha256 -hmac \"$SECRET\" -hex | sed 's/^.* //')\n"
        + "curl -s "
        + GameState.base_url
        + "/v2/custom-events -H 'content-type: application/json' \\\n"
        + '  -H "x-client-id: $CLIENT_ID" -H "x-timestamp: $TS" -H "x-signature: $SIG" -d "$BODY"'
    )


def _credential(c: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.text(c.name, weight="medium", size="2"),
        rx.code(c.client_id, size="1", word_break="break-all"),
        spacing="1",
    )


def _credential_status(c: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.cond(
            c.revoked_at != "",
            rx.text("Revoked at " + c.revoked_at, size="2"),
            rx.badge("live", color_scheme="green"),
        ),
        rx.text("Created " + c.created_at, size="1", color_scheme="gray"),
        spacing="1",
    )


def _revoke(c: rx.Var) -> rx.Component:
    return rx.cond(
        c.revoked_at == "",
        confirm_button(
            "Revoke",
            title="Revoke credential “" + c.name + "”?",
            description="Games using it stop being accepted: every request signed with it "
            "is refused from now on. This cannot be undone.",
            confirm="Revoke",
            on_confirm=GameState.revoke(c.client_id),
            size="1",
            color_scheme="red",
            variant="soft",
        ),
    )


def _credentials() -> rx.Component:
    s = GameState
    return card(
        rx.heading("Credentials", size="4", as_="h2"),
        rx.text(
            "A game holds at most two live credentials: add the new one, deploy it, then revoke the old.",
            size="2",
            color_scheme="gray",
        ),
        data_table(
            ("Credential", "Status", ""),
            s.credentials,
            lambda c: [_credential(c), _credential_status(c), _revoke(c)],
            test_id="credential-row",
        ),
        rx.form(
            rx.vstack(
                rx.el.label(
                    rx.text("New credential", size="2", weight="medium"), html_for="credential-name"
                ),
                rx.hstack(
                    rx.input(
                        name="name",
                        id="credential-name",
                        placeholder="Name, e.g. prod-key (optional)",
                        max_length=60,
                        size="2",
                        width="280px",
                        max_width="100%",
                    ),
                    submission_count(),
                    rx.button("Add credential", size="2", variant="soft", type="submit"),
                    wrap="wrap",
                ),
                field_error(s.credential_errors, "name"),
                field_error(s.credential_errors, "form"),
                spacing="1",
                width="100%",
            ),
            on_submit=s.add_credential,
            key=s.credential_form_key.to_string(),
            width="100%",
        ),
    )


def _send_first_event() -> rx.Component:
    s = GameState
    curl = _curl(s.example_client_id, rx.cond(s.fresh_secret != "", s.fresh_secret, "<secret>"))
    return card(
        rx.hstack(
            rx.heading("Send your first event", size="4", as_="h2"),
            rx.spacer(),
            rx.button(
                rx.icon("copy", size=14),
                "Copy",
                size="1",
                variant="soft",
                type="button",
                aria_label="Copy the curl example",
                on_click=[rx.set_clipboard(curl), rx.toast.info("Copied")],
            ),
            align="center",
            width="100%",
        ),
        rx.text(
            "Sign each request with HMAC-SHA256 over client id + timestamp + raw body. "
            "From a shell (keep the secret on your game server, never in the client):",
            size="2",
            color_scheme="gray",
        ),
        rx.box(
            rx.code_block(
                curl,
                language="bash",
                wrap_long_lines=True,
                width="100%",
                custom_style={"overflowX": "hidden"},
                code_tag_props={"style": {"whiteSpace": "pre-wrap", "overflowWrap": "anywhere"}},
            ),
            width="100%",
            max_width="100%",
            min_width="0",
            data_testid="curl-example",
        ),
        rx.text("Game id: ", rx.code(s.game_id, word_break="break-all"), size="2"),
        rx.link(
            "Full integration guide (Python, Node.js, Unity)",
            href="/v2/docs",
            is_external=True,
            size="2",
        ),
    )


def _fresh_secret() -> rx.Component:
    s = GameState
    return rx.callout(
        rx.vstack(
            rx.text(
                rx.cond(
                    s.fresh_name != "",
                    "New credential “" + s.fresh_name + "”.",
                    "New credential.",
                ),
                " Copy the secret now: it is not shown again.",
                weight="bold",
            ),
            rx.text(
                "Client id: ",
                rx.code(s.fresh_client_id, data_testid="fresh-client-id", word_break="break-all"),
            ),
            rx.hstack(
                rx.text(
                    "Secret: ",
                    rx.code(s.fresh_secret, data_testid="fresh-secret", word_break="break-all"),
                ),
                rx.icon_button(
                    rx.icon("copy", size=14),
                    size="1",
                    variant="ghost",
                    aria_label="Copy secret",
                    on_click=[rx.set_clipboard(s.fresh_secret), rx.toast.info("Copied")],
                ),
                align="center",
            ),
            rx.button("I have stored it", size="1", variant="soft", on_click=s.dismiss_secret),
            spacing="2",
            min_width="0",
        ),
        icon="key-round",
        color_scheme="amber",
        width="100%",
    )


def game() -> rx.Component:
    s = GameState
    return page(
        s.game_name,
        game_tabs(s, routes.GAME),
        rx.cond(s.fresh_secret != "", _fresh_secret()),
        _credentials(),
        _send_first_event(),
    )
