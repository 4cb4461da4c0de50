"""Bare reference routes: what FastAPI alone costs for the same answer, served the same
way as Questwall, so a figure can be read as a share of it.

- `GET /missions/{mission_id}`: a 302 to a fixed address (the tracking-link reference).
- `GET /offerwall/offers`: the bytes of one offers page, read once at start from the file
  named by BENCH_OFFERS_PAGE (the offers-listing reference: same bytes, nothing computed).
"""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse, Response

_page_file = os.environ.get("BENCH_OFFERS_PAGE", "")
PAGE = Path(_page_file).read_bytes() if _page_file else b'{"offers":[]}'

app = FastAPI()


@app.get("/missions/{mission_id}")
async def click(mission_id: str) -> Response:
    return RedirectResponse("https://game.example/?platformid=bench", status_code=302)


@app.get("/offerwall/offers")
async def offers_page() -> Response:
    return Response(PAGE, media_type="application/json")
