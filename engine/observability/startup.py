"""What `herald serve` and `herald worker` check and say before they start.

A database or Redis they cannot use stops them with one line naming the setting (an
orchestrator restarts them); once running, a lost dependency is waited out instead. The
summary line says what the process will use, and which channels are off (a production
service without a channel's provider refuses sends for it: docs/api.md).
"""

from __future__ import annotations

import logging
from typing import Any

from config.redaction import mask_secrets
from config.settings import ConfigError, Settings
from engine.observability import readiness
from engine.observability.outages import SETTINGS
from engine.plugins.manager import default_registry, provider_url

log = logging.getLogger("herald.startup")
START_BOUND = 5.0


class Unreachable(Exception):
    """A dependency did not answer at start: not a configuration error (exit 2, which a
    supervisor must not restart) but an outage that a restart may outlast (exit 1)."""

    def __init__(self, setting: str, what: str, reason: str) -> None:
        super().__init__(f"cannot reach {what}: {mask_secrets(reason)} (check {setting})")
        self.setting = setting


def check_dependencies(settings: Settings) -> None:
    """Raise ConfigError when HERALD_REDIS_URL is unset, Unreachable naming
    HERALD_DATABASE_URL or HERALD_REDIS_URL when that part does not answer within a few
    seconds; the process must already be configured (runtime)."""
    if not settings.redis_url:
        raise ConfigError("HERALD_REDIS_URL", "is not set: the API and the worker need Redis "
                          "(herald dev starts one for you)")
    failed = readiness.problems(bound=START_BOUND)
    for part in ("database", "redis"):
        if part in failed:
            what = "the database" if part == "database" else "Redis"
            if readiness.refused(part):
                raise ConfigError(SETTINGS[part], f"{what} refuses this process: {failed[part]}")
            raise Unreachable(SETTINGS[part], what, failed[part])


def channels_off(settings: Settings) -> list[str]:
    """Channels whose provider setting is empty (production leaves them unset): ``email
    (HERALD_EMAIL_PROVIDER unset)``. Email still works for a workspace with its own."""
    off = []
    for channel in default_registry().ordered_channels():
        setting = channel.provider_setting if channel.needs_provider else None
        if setting and not provider_url(settings, setting).strip():
            off.append(f"{channel.name} ({setting} unset)")
    return off


def summary(settings: Settings, process: str, **details: Any) -> None:
    """One line: what this process runs with (no password: every URL is masked)."""
    off = channels_off(settings)
    log.info("%s starting: env=%s database=%s redis=%s channels off: %s", process,
             settings.env, mask_secrets(settings.database_url),
             mask_secrets(settings.redis_url or "unset"), ", ".join(off) or "none",
             extra={"env": settings.env, "channelsOff": ", ".join(off) or None,
                    "logFormat": settings.log_format,
                    "metrics": "on" if settings.metrics_token else "off", **details})
