"""Outbound webhooks (spec section 6): destination policy, custom header rules, signatures and
the delivery attempt itself."""
