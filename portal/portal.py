"""The only module that joins the halves: the Reflex portal with the API mounted in front."""

import os

import reflex as rx
from starlette.types import ASGIApp, Receive, Scope, Send

from api.app import API_PREFIXES, create_api
from api.core.startup import exit_unless_ready
from api.ops import (
    DRAIN_FILE_VARIABLE,
    Readiness,
    configure_logging,
    route_templates,
    start_tracing,
    watch_pool,
    with_metrics,
    with_probes,
)
from api.routes.tracking import TRACKING_PREFIXES
from api.security_headers import WALL_PATH
from api.worker import (
    background_alerts,
    background_dispatcher,
    background_mail,
    background_webhooks,
)
from portal import activity, home, routes
from portal.accounts import account, login, sessions, users
from portal.accounts.account_state import AccountState
from portal.accounts.login_state import LoginCodeState, LoginState
from portal.accounts.password_state import ForgotState, ResetState
from portal.accounts.sessions_state import SessionsState
from portal.accounts.users_state import UsersState
from portal.audit import audit_log, history
from portal.audit.audit_log_state import AuditLogState
from portal.audit.history_state import (
    GameHistoryState,
    OfferwallHistoryState,
    PublisherSecurityState,
    StudioSecurityState,
)
from portal.conversions import page as conversions
from portal.conversions.state import ConversionsState
from portal.economics import payout_rules, promotions
from portal.economics.payout_rules_state import PayoutRulesState
from portal.economics.promotions_state import PromotionsState
from portal.fraud import page as fraud
from portal.fraud.state import FraudState
from portal.ingest import page as debugger
from portal.ingest.state import DebuggerState
from portal.listing import page as catalog
from portal.listing.state import CatalogState
from portal.mail import page as mail
from portal.mail.state import MailState
from portal.missions import missions
from portal.missions.missions_state import EditorState, MissionsState, QuestState, RuleTesterState
from portal.ops import page as system
from portal.ops.state import SystemState
from portal.postbacks import page as postbacks
from portal.postbacks.state import DeliveryState, PostbackState
from portal.publishers import publisher, publishers, wall
from portal.publishers.publishers_state import StaffState
from portal.publishers.wall_state import WallState
from portal.reports import dashboard, reports
from portal.reports.dashboard_state import DashboardState
from portal.reports.margin_state import MarginState
from portal.reports.reports_state import ReportState
from portal.session_routes import add_session_routes
from portal.state.auth import AuthState
from portal.state.workspace import ApplicationState, WorkspaceState
from portal.studios import page as studios
from portal.studios.games_state import GamesState, GameState
from portal.studios.state import StudioState
from portal.tickets import page as tickets
from portal.tickets.state import TicketsState
from portal.webhooks import page as webhooks
from portal.webhooks.state import WebhooksState, WebhookState

# `questwall serve` checks before Reflex builds; this covers a server started another way.
exit_unless_ready()

# The API's app is the outer one; the portal's own HTTP routes (the session cookie)
# join it, so they answer before Reflex does.
api = create_api(on_stored=activity.touch)
add_session_routes(api)

# Requests for these paths are the API's alone: signed events, offers, tracking links,
# the hosted wall.
_API_PATHS = tuple(p + "/" for p in API_PREFIXES) + TRACKING_PREFIXES + (WALL_PATH + "/",)


class QuestwallApp(rx.App):
    """The Reflex app, with API requests sent straight to the API's app.

    Reflex wraps whatever it serves in an app of its own (its contexts, CORS, error
    middleware, a mount) that only the portal needs. The API's app already carries its
    own CORS, error handling and security headers, and it is the outer app of the portal
    too, so an API request answers the same either way, without those layers (+8% offers
    requests per second on SQLite, bench/offers.py).
    """

    def __call__(self) -> ASGIApp:
        settings = api.state.settings
        # Each server process builds its app after it was forked: its log handler and its
        # trace exporter (a thread) are its own.
        configure_logging(settings.resolved_log_format, settings.log_level)
        start_tracing(api.state.engine)
        watch_pool(api.state.engine)
        portal = super().__call__()

        async def api_first(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope["path"] if scope["type"] == "http" else ""
            if path.startswith(_API_PATHS) or path == WALL_PATH:
                await api(scope, receive, send)
            else:
                await portal(scope, receive, send)

        # Under `questwall serve`, that process drains (it receives the SIGTERM) and names
        # the file that says so; a server started another way drains itself.
        drain_file = os.environ.get(DRAIN_FILE_VARIABLE)
        readiness = Readiness(api.state.engine, redis_url=settings.redis_url, drain_file=drain_file)
        drain = 0 if drain_file else settings.drain_seconds
        counted = with_metrics(api_first, routes=route_templates(api), allow=settings.metrics_allow)
        return with_probes(
            counted, readiness, drain_seconds=drain, detail_allow=settings.metrics_allow
        )


app = QuestwallApp(
    api_transformer=api,
    head_components=[
        rx.el.link(rel="icon", href="/logo.svg", type="image/svg+xml"),
        rx.el.script(src="/unsaved.js", defer=True),
        rx.el.script(src="/dialog_focus.js", defer=True),
    ],
    stylesheets=["/portal.css"],
    # Toasts come in at the bottom right (across the bottom on a phone), where they cover
    # no page title and no tabs.
    toaster=rx.toast.provider(position="bottom-right", close_button=True),
)

# (page, route, title, on_load): every page of the portal.
PAGES = [
    (home.home, routes.HOME, "", AuthState.load_home),
    (login.login, routes.LOGIN, "Sign in", LoginState.load),
    (login.login_code, routes.LOGIN_CODE, "Enter your code", LoginCodeState.load),
    (login.signup, routes.SIGNUP, "Become a publisher", None),
    (publisher.application, routes.APPLICATION, "Your application", ApplicationState.load),
    (publisher.overview, routes.PUBLISHER, "Offerwall", WorkspaceState.load),
    (postbacks.postback, routes.PUBLISHER_POSTBACK, "Postback", PostbackState.load),
    (postbacks.deliveries, routes.PUBLISHER_DELIVERIES, "Deliveries", DeliveryState.load),
    (wall.wall, routes.PUBLISHER_WALL, "Wall", WallState.load),
    (promotions.promotions, routes.PUBLISHER_PROMOTIONS, "Promotions", PromotionsState.load),
    (publishers.publishers, routes.STAFF_PUBLISHERS, "Publishers", StaffState.load),
    (payout_rules.payout_rules, routes.STAFF_OFFERWALL, "Payout rules", PayoutRulesState.load),
    (studios.studios, routes.STAFF_STUDIOS, "Studios", StudioState.load),
    (studios.games, routes.GAMES, "Games", GamesState.load),
    (studios.game, routes.GAME, "Game", GameState.load),
    (missions.missions, routes.MISSIONS, "Missions", MissionsState.load),
    (missions.editor, routes.MISSION, "Mission", EditorState.load),
    (missions.quest, routes.QUEST, "Quest", QuestState.load),
    (missions.tester, routes.TESTER, "Rule tester", RuleTesterState.load),
    (debugger.events_page, routes.EVENTS, "Live events", DebuggerState.load),
    (webhooks.webhooks, routes.WEBHOOKS, "Webhooks", WebhooksState.load),
    (webhooks.webhook, routes.WEBHOOK, "Webhook endpoint", WebhookState.load),
    (reports.reports, routes.REPORTS, "Reports", ReportState.load),
    (reports.margin, routes.REPORTS_MARGIN, "Margin", MarginState.load),
    (login.forgot_password, routes.FORGOT_PAGE, "Forgot your password?", ForgotState.load),
    (login.reset_password, routes.RESET_PAGE, "Choose a new password", ResetState.load),
    (account.account, routes.ACCOUNT, "Your account", AccountState.load),
    (sessions.sessions, routes.ACCOUNT_SESSIONS, "Sessions", SessionsState.load),
    (users.users, routes.STAFF_USERS, "Users", UsersState.load),
    (mail.mail_outbox, routes.STAFF_MAIL, "Mail outbox", MailState.load),
    (system.system, routes.STAFF_SYSTEM, "System", SystemState.load),
    (audit_log.audit_log, routes.STAFF_AUDIT, "Audit log", AuditLogState.load),
    (history.game_history, routes.GAME_HISTORY, "History", GameHistoryState.load),
    (
        history.offerwall_history,
        routes.PUBLISHER_HISTORY,
        "History",
        OfferwallHistoryState.load,
    ),
    (
        history.publisher_security,
        routes.PUBLISHER_SECURITY,
        "Security log",
        PublisherSecurityState.load,
    ),
    (history.studio_security, routes.STUDIO_SECURITY, "Security log", StudioSecurityState.load),
    (dashboard.staff_dashboard, routes.STAFF, "Dashboard", DashboardState.load),
    (catalog.catalog, routes.PUBLISHER_OFFERS, "Offers", CatalogState.load),
    (conversions.conversions, routes.CONVERSIONS, "Conversions", ConversionsState.load),
    (fraud.fraud, routes.FRAUD, "Fraud", FraudState.load),
    (tickets.tickets, routes.TICKETS, "Tickets", TicketsState.load),
]
for component, route, title, on_load in PAGES:
    app.add_page(
        component,
        route=route,
        title=f"{title} · Questwall" if title else "Questwall",
        on_load=on_load,
    )

# FastAPI's lifespan never runs under Reflex: background work starts here.
app.register_lifespan_task(background_dispatcher)
app.register_lifespan_task(background_webhooks)
app.register_lifespan_task(background_mail)
app.register_lifespan_task(background_alerts)
