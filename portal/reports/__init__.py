"""Figures in the portal: the Reports and Margin pages (reports.py) and staff's dashboard
(dashboard.py), with their states."""
