"""The states more than one context uses: signing in and the refusals (auth.py), a game's
pages (game_scope.py), a publisher's workspace (workspace.py), paging (paging.py) and
the rows several pages show (rows.py)."""
