"""Support tickets: a player's "Missing reward?" report from the hosted wall with its
snapshot of what Questwall saw, and the desk where staff and publishers answer them.
"""
