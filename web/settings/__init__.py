"""A workspace's settings: API keys, webhooks, suppressions, senders, members, its email
provider and the audit log. One blueprint (blueprint.py); one module per page, each
registering its routes on it."""

from __future__ import annotations

from web.settings import (
    api_keys,
    audit_log,
    callbacks,
    data,
    index,
    members,
    provider,
    senders,
    suppressions,
    topics,
    webhooks,
)
from web.settings.blueprint import blueprint

MODULES = (index, api_keys, audit_log, callbacks, data, members, provider, senders,
           suppressions, topics, webhooks)  # imported for their routes

__all__ = ["MODULES", "blueprint"]
