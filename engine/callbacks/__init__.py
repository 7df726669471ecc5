"""Delivery callbacks (docs/callbacks.md): each outcome of a notification POSTed to its
workspace's callback URL, signed, retried and refused like a webhook (spec 6.1, 6.3-6.5)."""
