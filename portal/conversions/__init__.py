"""The Conversions page (page.py) and its state (state.py): staff find every conversion, a
designer their studio's, and reverse one."""
