"""Questwall's API: the domain's contexts (one package each), settings, and the FastAPI routes."""
