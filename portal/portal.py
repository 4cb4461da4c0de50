"""The only module that joins the halves: the Reflex portal with the API mounted in front."""

import reflex as rx

from api.app import create_api
from api.worker import background_dispatcher
from portal.pages.home import home

app = rx.App(api_transformer=create_api())
app.add_page(home, route="/", title="Questwall")
# FastAPI's lifespan never runs under Reflex: background work starts here.
app.register_lifespan_task(background_dispatcher)
