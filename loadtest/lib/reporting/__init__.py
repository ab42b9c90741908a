"""Turns a loadtest/run.sh results folder into report.md and PNG charts (see loadtest/report.py)."""
