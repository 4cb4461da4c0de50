"""Counts in words: a number and its noun agree ("1 mission", "2 missions")."""

from __future__ import annotations

import reflex as rx


def counted(count: rx.Var, one: str, many: str) -> rx.Var:
    """`count` followed by `one` or `many`, as the number needs."""
    return rx.cond(count == 1, f"1 {one}", count.to_string() + f" {many}")
