"""One process of the portal's backend, as far as its state goes: `write TOKEN VALUE` sets
a state variable of the browser session TOKEN, `read TOKEN` prints it. The state manager is
the one Reflex picks from `rxconfig.py`, as the served portal's is."""

from __future__ import annotations

import asyncio
import sys

import reflex as rx
from reflex.istate.manager import StateManager

import rxconfig  # noqa: F401  (the configuration Reflex reads, with REDIS_URL)


class Probe(rx.State):
    note: str = ""


async def main(action: str, ident: str, value: str = "") -> None:
    manager = StateManager.create()
    token = rx.BaseStateToken(ident=ident, cls=rx.State)
    if action == "write":
        async with manager.modify_state(token) as state:
            (await state.get_state(Probe)).note = value
    else:
        state = await manager.get_state(token)
        print(f"{type(manager).__name__} note={(await state.get_state(Probe)).note!r}")
    await manager.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
