"""Delivery reports: what happened to every notification, counted and listed from the same
definitions (docs/reports.md). Views and commands call these modules; none of them knows
Flask."""
