"""An in-process counter per game, moved whenever a game's data arrives in this process
(the API calls `touch` through the `on_stored` callback `portal.py` gives it).

The live event debugger compares it with what it showed last and queries the database
only when it moved (or now and then, for data that reached another API process)."""

from __future__ import annotations

import threading
from collections import defaultdict

_lock = threading.Lock()
_versions: defaultdict[str, int] = defaultdict(int)


def touch(game_id: str) -> None:
    with _lock:
        _versions[game_id] += 1


def version(game_id: str) -> int:
    with _lock:
        return _versions[game_id]
