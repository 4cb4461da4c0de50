"""Fraud screening's rules: the risk signals and what each does (`policy`, per offerwall
and stricter per mission), staff's blocklist and each offerwall's rules.
"""
