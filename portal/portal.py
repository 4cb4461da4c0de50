"""The only module that joins the halves: the Reflex portal with the API mounted in front."""

import reflex as rx

from api.app import create_api
from api.worker import background_dispatcher
from portal import routes
from portal.pages import debugger, games, home, login, missions, publisher, reports, staff
from portal.state.auth import AuthState
from portal.state.debugger import DebuggerState
from portal.state.games import GamesState, GameState
from portal.state.login import LoginState
from portal.state.missions import EditorState, MissionsState, QuestState, TesterState
from portal.state.postbacks import DeliveryState, PostbackState
from portal.state.reports import ReportState
from portal.state.staff import StaffState
from portal.state.studios import StudioState
from portal.state.workspace import ApplicationState, WorkspaceState

app = rx.App(api_transformer=create_api())

app.add_page(home.home, route=routes.HOME, title="Questwall", on_load=AuthState.load_home)
app.add_page(login.login, route=routes.LOGIN, title="Sign in · Questwall", on_load=LoginState.load)
app.add_page(login.signup, route=routes.SIGNUP, title="Become a publisher · Questwall")
app.add_page(
    publisher.application,
    route=routes.APPLICATION,
    title="Your application · Questwall",
    on_load=ApplicationState.load,
)
app.add_page(
    publisher.overview,
    route=routes.PUBLISHER,
    title="Offerwall · Questwall",
    on_load=WorkspaceState.load,
)
app.add_page(
    publisher.postback,
    route=routes.PUBLISHER_POSTBACK,
    title="Postback · Questwall",
    on_load=PostbackState.load,
)
app.add_page(
    publisher.deliveries,
    route=routes.PUBLISHER_DELIVERIES,
    title="Deliveries · Questwall",
    on_load=DeliveryState.load,
)
app.add_page(
    staff.publishers,
    route=routes.STAFF_PUBLISHERS,
    title="Publishers · Questwall",
    on_load=StaffState.load,
)
app.add_page(
    games.studios, route=routes.STAFF_STUDIOS, title="Studios · Questwall", on_load=StudioState.load
)
app.add_page(games.games, route=routes.GAMES, title="Games · Questwall", on_load=GamesState.load)
app.add_page(games.game, route=routes.GAME, title="Game · Questwall", on_load=GameState.load)
app.add_page(
    missions.missions,
    route=routes.MISSIONS,
    title="Missions · Questwall",
    on_load=MissionsState.load,
)
app.add_page(
    missions.editor, route=routes.MISSION, title="Mission · Questwall", on_load=EditorState.load
)
app.add_page(missions.quest, route=routes.QUEST, title="Quest · Questwall", on_load=QuestState.load)
app.add_page(
    missions.tester, route=routes.TESTER, title="Rule tester · Questwall", on_load=TesterState.load
)
app.add_page(
    debugger.events_page,
    route=routes.EVENTS,
    title="Live events · Questwall",
    on_load=DebuggerState.load,
)
app.add_page(
    reports.reports, route=routes.REPORTS, title="Reports · Questwall", on_load=ReportState.load
)

# FastAPI's lifespan never runs under Reflex: background work starts here.
app.register_lifespan_task(background_dispatcher)
