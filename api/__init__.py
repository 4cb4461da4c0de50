"""Questwall's API: settings, domain services and the FastAPI routes."""
