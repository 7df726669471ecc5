"""Channels turn a notification payload into the message a provider sends.

Channels see plain data only (no models, no Flask); the plugin API they use is
``engine.plugins.contracts`` and ``engine.plugins.hookspecs``.
"""
