"""Conversions after they are made: finding them, reversing one (`ledger`), and the
review queue of held conversions (`review`).
"""
