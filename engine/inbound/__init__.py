"""Events that come back after a notification left: provider webhooks (Postmark, Twilio)
and bounce or complaint reports by mail (the `herald bounces` listener). Each is matched to
its notification and recorded through engine/reports/events.py (docs/reports.md)."""
