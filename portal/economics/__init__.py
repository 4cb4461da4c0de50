"""The network's economics in the portal: a publisher's promotions (promotions.py) and staff's
payout rules of one offerwall (payout_rules.py)."""
