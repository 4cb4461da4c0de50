"""Tracking links: the click recorded and its progress started (`clicks`), after the
click screening (`screening`) has let it through.
"""
