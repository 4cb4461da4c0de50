"""Accounts in the portal: signing in and up (login.py), a forgotten password
(password_state.py), one's own account (account.py) and staff's Users page (users.py)."""
