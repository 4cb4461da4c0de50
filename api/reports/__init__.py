"""Figures: the portal's reports and their CSV, the publishers' reporting API, the staff
dashboard and the Fraud page's figures. The top layer: it reads every other context.
"""
