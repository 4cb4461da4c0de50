"""The Questwall portal (Reflex)."""
