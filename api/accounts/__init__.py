"""Portal accounts: sign-in and sessions, passwords and their reset links, the sign-in
throttles, staff's management of accounts, and who may do what (`access`, asked by every
portal action on the server).
"""
