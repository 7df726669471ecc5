"""Typed settings read from the environment; every error names the setting at fault."""

from __future__ import annotations

import ipaddress
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from config.redaction import mask_secrets
from config.secret_keys import DEV_SECRET_KEY, secret_key_problem
from config.sign_in_settings import SignInSettingProblem, oidc_settings
from config.url_settings import (
    UrlProblem,
    check_database_url,
    check_provider_urls,
    check_redis_url,
    split,
)

ENVIRONMENTS = ("development", "test", "production")
DEFAULT_DATABASE_URL = "sqlite:///var/herald.sqlite3"
# Whole-number settings reach SQL parameters and Redis scripts: a 32-bit integer fits all.
MAX_WHOLE = 2**31 - 1
# A longer grace would put the reconciler's cut-off before year 1 (OverflowError).
MAX_RECONCILE_AFTER_SECONDS = 86400.0


class ConfigError(ValueError):
    """A setting is missing or malformed; ``setting`` names the variable."""

    def __init__(self, setting: str, message: str) -> None:
        # The message quotes the raw value: a database or Redis URL's password stays out.
        super().__init__(f"{setting}: {mask_secrets(message)}")
        self.setting = setting


@dataclass(frozen=True)
class Settings:
    """Everything Herald reads from its environment, already validated."""

    env: str = "development"
    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str | None = None
    secret_key: str = DEV_SECRET_KEY
    public_url: str = "http://127.0.0.1:8000"
    email_provider: str = "inbox://"
    sms_provider: str = "inbox://"
    port: int = 8000
    webhook_allow_private: bool = False
    webhook_max_attempts: int = 8
    webhook_backoff: tuple[float, ...] = ()
    # Development and test only: email and SMS retry waits (empty: the fixed schedule).
    email_backoff: tuple[float, ...] = ()
    list_sweep_seconds: float = 5.0  # the lists' pass (development and test may shorten it)
    trusted_proxies: int = 0
    rate_limit_send_per_key: int = 300
    rate_limit_send_per_ip: int = 300
    rate_limit_validate_per_ip: int = 120
    # The web editor's costly requests, per person and per minute (docs/web.md, "Security").
    rate_limit_web_preview: int = 60
    rate_limit_web_draft: int = 120
    rate_limit_web_test_send: int = 10
    key_cache_seconds: float = 5.0
    reconcile_after_seconds: float = 60.0
    # One request's rendering in all (every part of a send or preview): docs/api.md.
    render_budget_seconds: float = 0.5
    mail_from: str | None = None  # the web application's own mail (invitations, resets)
    # Sender verification (docs/senders.md): every DNS lookup Herald makes asks these
    # servers, ("host", port) pairs (empty: the system resolver); the zones records point at.
    dns_nameservers: tuple[tuple[str, int], ...] = ()
    dkim_zone: str | None = None
    return_path_domain: str | None = None
    report_retention_days: int = 90
    # Provider failover's circuit breaker (engine/delivery/breaker.py).
    provider_breaker_failures: int = 3
    provider_breaker_seconds: float = 30.0
    workspace_concurrency: int | None = None  # None: a quarter of the worker's concurrency
    # Operations (docs/operations.md): log lines as text or JSON, /metrics' bearer token,
    # the port the worker serves its own /metrics on (None: not served).
    log_format: str = "text"
    metrics_token: str | None = None
    worker_metrics_port: int | None = None
    # Web sessions (docs/web.md, "Security"): ended after this long unused, and this long
    # after sign-in whatever the use (OWASP ASVS 7.3.1, 7.3.2).
    session_idle_minutes: int = 12 * 60
    session_lifetime_days: int = 30
    # Single sign-on (config/sign_in_settings.py; docs/web.md, "Security decisions").
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: str = field(default="", repr=False)
    oidc_only: bool = False
    oidc_roles_claim: str = ""

    @property
    def production(self) -> bool:
        return self.env == "production"

    def with_changes(self, **changes: object) -> Settings:
        """A copy with some fields replaced (tests and `herald dev` use this)."""
        return replace(self, **changes)


def _bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(name, f"expected a boolean (true/false), got {raw!r}")


def _int(name: str, raw: str, minimum: int = 0, maximum: int = MAX_WHOLE) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise ConfigError(name, f"expected a whole number, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(name, f"must be at least {minimum}, got {value}")
    if value > maximum:
        raise ConfigError(name, f"must be at most {maximum}, got {value}")
    return value


def _float(name: str, raw: str, maximum: float = math.inf) -> float:
    """A finite number of seconds: nan or inf would fail later, far from the setting."""
    try:
        value = float(raw.strip())
    except ValueError:
        raise ConfigError(name, f"expected a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise ConfigError(name, f"expected a finite number, got {raw.strip()!r}")
    if value < 0:
        raise ConfigError(name, f"must not be negative, got {value}")
    if value > maximum:
        raise ConfigError(name, f"must be at most {maximum:g}, got {value:g}")
    return value


def _backoff(name: str, raw: str) -> tuple[float, ...]:
    parts = [p for p in raw.split(",") if p.strip()]
    values = tuple(_float(name, p) for p in parts)
    if any(v > 900 for v in values):
        raise ConfigError(name, "every wait must be at most 900 seconds (15 minutes)")
    return values


def _url(name: str, raw: str, check: Callable[[str], object]) -> str:
    """``raw`` checked by ``check`` (config/url_settings.py), its problem named by setting."""
    try:
        check(raw)
    except UrlProblem as err:
        raise ConfigError(name, str(err)) from None
    return raw


def _mail_from(raw: str) -> str:
    from email_validator import EmailNotValidError, validate_email

    try:
        return validate_email(raw.strip(), check_deliverability=False).normalized
    except EmailNotValidError as err:
        raise ConfigError("HERALD_MAIL_FROM", f"not an email address: {err}") from None


def _delivery_slot_settings(get) -> dict[str, object]:
    """HERALD_WORKSPACE_CONCURRENCY: most deliveries of one workspace in flight per worker
    process (docs/delivery.md, "Queues and fairness")."""
    if raw := get("HERALD_WORKSPACE_CONCURRENCY"):
        return {"workspace_concurrency": _int("HERALD_WORKSPACE_CONCURRENCY", raw, minimum=1)}
    return {}


def _breaker_settings(get) -> dict[str, object]:
    """HERALD_PROVIDER_BREAKER_FAILURES and HERALD_PROVIDER_BREAKER_SECONDS (failover)."""
    values: dict[str, object] = {}
    if raw := get("HERALD_PROVIDER_BREAKER_FAILURES"):
        values["provider_breaker_failures"] = _int("HERALD_PROVIDER_BREAKER_FAILURES", raw,
                                                   minimum=1)
    if raw := get("HERALD_PROVIDER_BREAKER_SECONDS"):
        seconds = _float("HERALD_PROVIDER_BREAKER_SECONDS", raw, maximum=86400.0)
        if seconds < 1:
            raise ConfigError("HERALD_PROVIDER_BREAKER_SECONDS", f"must be at least 1, got {raw!r}")
        values["provider_breaker_seconds"] = seconds
    return values


def provider_urls(setting: str) -> list[str]:
    """A provider setting's URLs, in the order they are tried (separated by whitespace)."""
    return setting.split()


def _provider(name: str, raw: str) -> str:
    return _url(name, raw, lambda value: check_provider_urls(value, provider_urls(value)))


def provider_scheme_of(url: str) -> str:
    """The scheme as the provider resolver reads it (urlsplit: lower-cased, leading blanks
    stripped), so ``INBOX://`` or `` inbox://`` cannot slip past a check the resolver obeys."""
    return urlsplit(url).scheme


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read and check every ``HERALD_*`` variable; raise ConfigError naming the first bad one."""
    env = dict(os.environ if environ is None else environ)
    get = env.get
    name = "HERALD_ENV"
    mode = get(name, "development").strip().lower() or "development"
    if mode not in ENVIRONMENTS:
        raise ConfigError(name, f"must be one of {', '.join(ENVIRONMENTS)}, got {mode!r}")

    values: dict[str, object] = {"env": mode}
    if raw := get("HERALD_DATABASE_URL"):
        values["database_url"] = _url("HERALD_DATABASE_URL", raw, check_database_url)
    if raw := get("HERALD_REDIS_URL"):
        values["redis_url"] = _url("HERALD_REDIS_URL", raw, check_redis_url)

    secret = get("HERALD_SECRET_KEY", "")
    if secret:
        problem = secret_key_problem(secret) if mode == "production" else None
        if problem:
            raise ConfigError("HERALD_SECRET_KEY", problem)
        values["secret_key"] = secret
    elif mode == "production":
        raise ConfigError("HERALD_SECRET_KEY", "is required in production")

    if raw := get("HERALD_PUBLIC_URL"):
        values["public_url"] = _url("HERALD_PUBLIC_URL", raw,
                                    lambda v: split(v, ("http", "https"))).rstrip("/")
    if raw := get("HERALD_MAIL_FROM"):
        values["mail_from"] = _mail_from(raw)
    if raw := get("HERALD_EMAIL_PROVIDER"):
        values["email_provider"] = _provider("HERALD_EMAIL_PROVIDER", raw)
    if raw := get("HERALD_SMS_PROVIDER"):
        values["sms_provider"] = _provider("HERALD_SMS_PROVIDER", raw)
    if raw := get("HERALD_PORT"):
        port = _int("HERALD_PORT", raw, minimum=1)
        if port > 65535:
            raise ConfigError("HERALD_PORT", f"must be at most 65535, got {port}")
        values["port"] = port
    if (raw := get("HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS")) is not None:
        allow = _bool("HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS", raw)
        if allow and mode == "production":
            raise ConfigError(
                "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS",
                "is refused in production (development and test only)",
            )
        values["webhook_allow_private"] = allow
    if raw := get("HERALD_WEBHOOK_MAX_ATTEMPTS"):
        values["webhook_max_attempts"] = _int("HERALD_WEBHOOK_MAX_ATTEMPTS", raw, minimum=1)
    if raw := get("HERALD_WEBHOOK_BACKOFF"):
        values["webhook_backoff"] = _backoff("HERALD_WEBHOOK_BACKOFF", raw)
    if raw := get("HERALD_EMAIL_BACKOFF"):
        if mode == "production":
            raise ConfigError("HERALD_EMAIL_BACKOFF",
                              "is refused in production (development and test only)")
        values["email_backoff"] = _backoff("HERALD_EMAIL_BACKOFF", raw)
    if raw := get("HERALD_LIST_SWEEP_SECONDS"):
        if mode == "production":
            raise ConfigError("HERALD_LIST_SWEEP_SECONDS",
                              "is refused in production (development and test only)")
        values["list_sweep_seconds"] = max(0.1, _float("HERALD_LIST_SWEEP_SECONDS", raw,
                                                       maximum=5.0))
    if raw := get("HERALD_TRUSTED_PROXIES"):
        values["trusted_proxies"] = _int("HERALD_TRUSTED_PROXIES", raw)
    for setting, attr in (
        ("HERALD_RATE_LIMIT_SEND_PER_KEY", "rate_limit_send_per_key"),
        ("HERALD_RATE_LIMIT_SEND_PER_IP", "rate_limit_send_per_ip"),
        ("HERALD_RATE_LIMIT_VALIDATE_PER_IP", "rate_limit_validate_per_ip"),
        ("HERALD_RATE_LIMIT_WEB_PREVIEW", "rate_limit_web_preview"),
        ("HERALD_RATE_LIMIT_WEB_DRAFT", "rate_limit_web_draft"),
        ("HERALD_RATE_LIMIT_WEB_TEST_SEND", "rate_limit_web_test_send"),
    ):
        if raw := get(setting):
            values[attr] = _int(setting, raw, minimum=1)
    if raw := get("HERALD_KEY_CACHE_SECONDS"):
        values["key_cache_seconds"] = min(_float("HERALD_KEY_CACHE_SECONDS", raw), 5.0)
    if raw := get("HERALD_RECONCILE_AFTER_SECONDS"):
        values["reconcile_after_seconds"] = _float(
            "HERALD_RECONCILE_AFTER_SECONDS", raw, maximum=MAX_RECONCILE_AFTER_SECONDS)
    values.update(_sender_settings(get))
    if raw := get("HERALD_RENDER_BUDGET_SECONDS"):
        values["render_budget_seconds"] = _float("HERALD_RENDER_BUDGET_SECONDS", raw,
                                                 maximum=10.0)
    if raw := get("HERALD_REPORT_RETENTION_DAYS"):
        values["report_retention_days"] = _int("HERALD_REPORT_RETENTION_DAYS", raw, minimum=1,
                                               maximum=36500)
    values.update(_breaker_settings(get))
    values.update(_delivery_slot_settings(get))
    values.update(_operations_settings(get))
    if raw := get("HERALD_SESSION_IDLE_MINUTES"):
        values["session_idle_minutes"] = _int("HERALD_SESSION_IDLE_MINUTES", raw, minimum=5,
                                              maximum=7 * 24 * 60)
    if raw := get("HERALD_SESSION_LIFETIME_DAYS"):
        values["session_lifetime_days"] = _int("HERALD_SESSION_LIFETIME_DAYS", raw, minimum=1,
                                               maximum=365)
    try:
        values.update(oidc_settings(get, _bool))
    except SignInSettingProblem as problem:
        raise ConfigError(problem.name, problem.reason) from None
    if mode == "production":
        for provider in ("email_provider", "sms_provider"):
            setting = "HERALD_" + provider.upper()
            if any(provider_scheme_of(url) == "inbox"
                   for url in provider_urls(str(values.get(provider, "")))):
                # The dev inbox keeps mail in the database; it is never a production provider.
                raise ConfigError(setting, "inbox:// is for development and test only")
            # Unset in production means "not configured": deliveries fail visibly, not silently.
            values.setdefault(provider, "")
    return Settings(**values)  # type: ignore[arg-type]


def _nameservers(name: str, raw: str) -> tuple[tuple[str, int], ...]:
    """``host[:port]`` items, comma-separated; a host is an IP address (``[v6]:port`` with a
    port), since the servers that resolve names cannot be found by name."""
    servers = []
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        host, port = item, "53"
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else ("53" if not rest else "?")
        elif item.count(":") == 1:
            host, _, port = item.partition(":")
        try:
            address = str(ipaddress.ip_address(host))
        except ValueError:
            raise ConfigError(name, f"{item!r}: the host must be an IP address") from None
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(name, f"{item!r}: the port must be a number from 1 to 65535")
        servers.append((address, int(port)))
    if not servers:
        raise ConfigError(name, "expected host[:port] items separated by commas")
    return tuple(servers)


_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")


def _zone(name: str, raw: str) -> str:
    """A DNS name Herald's records point into: ASCII, at least two labels, and short enough
    that ``hd1.<label>.<zone>`` stays within DNS's 253 characters."""
    value = raw.strip().rstrip(".").lower()
    labels = value.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise ConfigError(name, f"expected a DNS name such as herald.example, got {raw!r}")
    if len(value) > 180:
        raise ConfigError(name, "must be at most 180 characters")
    return value


def _sender_settings(get: Callable[[str], str | None]) -> dict[str, object]:
    values: dict[str, object] = {}
    if raw := get("HERALD_DNS_NAMESERVERS"):
        values["dns_nameservers"] = _nameservers("HERALD_DNS_NAMESERVERS", raw)
    if raw := get("HERALD_DKIM_ZONE"):
        values["dkim_zone"] = _zone("HERALD_DKIM_ZONE", raw)
    if raw := get("HERALD_RETURN_PATH_DOMAIN"):
        values["return_path_domain"] = _zone("HERALD_RETURN_PATH_DOMAIN", raw)
    return values


LOG_FORMATS = ("text", "json")


def _operations_settings(get: Callable[[str], str | None]) -> dict[str, object]:
    """HERALD_LOG_FORMAT, HERALD_METRICS_TOKEN and HERALD_WORKER_METRICS_PORT."""
    values: dict[str, object] = {}
    if raw := get("HERALD_LOG_FORMAT"):
        fmt = raw.strip().lower()
        if fmt not in LOG_FORMATS:
            raise ConfigError("HERALD_LOG_FORMAT", f"must be one of {', '.join(LOG_FORMATS)}, "
                              f"got {raw!r}")
        values["log_format"] = fmt
    if raw := get("HERALD_METRICS_TOKEN"):
        if len(raw.strip()) < 16:
            # The value is never echoed: it is a secret even when too short.
            raise ConfigError("HERALD_METRICS_TOKEN", "must be at least 16 characters")
        values["metrics_token"] = raw.strip()
    if raw := get("HERALD_WORKER_METRICS_PORT"):
        port = _int("HERALD_WORKER_METRICS_PORT", raw, minimum=1, maximum=65535)
        if "metrics_token" not in values:
            raise ConfigError("HERALD_WORKER_METRICS_PORT", "needs HERALD_METRICS_TOKEN: "
                              "the worker's /metrics answers only with it")
        values["worker_metrics_port"] = port
    return values
