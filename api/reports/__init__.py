"""Figures: the portal's reports and their CSV, the publishers' reporting API, the staff
dashboard and the Fraud page's figures. The top layer: it reads every other context.
"""

from api.reports.csv_export import to_csv
from api.reports.fraud_page import DAYS
from api.reports.ranges import MAX_DAYS, PRESETS
from api.reports.reporting_api import DEFAULT_LIMIT, GROUP_BY, MAX_LIMIT, MAX_OFFSET

__all__ = [
    "DAYS",
    "DEFAULT_LIMIT",
    "GROUP_BY",
    "MAX_DAYS",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "PRESETS",
    "to_csv",
]
