"""What publishers list: `GET /offerwall/offers` (`offers`), one player's side of it
(`players`: filters, progress, what is left to do; the hosted wall uses it too), the
publisher's offer catalog in the portal (`catalog`), and an offer as players see it
(`preview`).
"""
