"""The URL settings, each read the way the client that uses it will read it.

A URL the client would read differently from what it says (``redis://host/notadb``, which
redis-py silently takes as database 0), or refuse only at the first connection, is refused
at start-up with one line. A URL is quoted in a message only through ``mask_url``: its user
and password never reach a terminal or a log.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from config.redaction import mask_url

_TRUTHS = ("true", "false", "1", "0", "yes", "no", "on", "off")
_DB_NUMBER = re.compile(r"^/?(\d+)?$")
# libpq's values (PostgreSQL 14 on): read-write picks the primary of a multi-host URL.
_SESSION_ATTRS = ("any", "read-write", "read-only", "primary", "standby", "prefer-standby")


class UrlProblem(ValueError):
    """Why a URL setting is unusable (its text never holds a password)."""


def split(raw: str, schemes: tuple[str, ...], one_host: bool = True) -> SplitResult:
    """``raw`` split as urllib does (the scheme lower-cased), its scheme and port checked
    (``one_host=False``: the caller reads a comma-separated host list itself)."""
    try:
        parts = urlsplit(raw)
        if one_host:
            parts.port  # noqa: B018 -- parsing it is the check: a bad port raises ValueError
    except ValueError as err:
        raise UrlProblem(f"{err}; got {mask_url(raw)!r}") from None
    if parts.scheme not in schemes:
        raise UrlProblem(f"scheme must be one of {', '.join(schemes)}; got {mask_url(raw)!r}")
    return parts


def _whole(raw: str, what: str) -> int:
    try:
        value = int(raw.strip())
    except ValueError:
        raise UrlProblem(f"{what} must be a whole number, got {raw!r}") from None
    if value < 1:
        raise UrlProblem(f"{what} must be at least 1, got {value}")
    return value


def postgres_hosts(netloc: str) -> tuple[str | None, str | None]:
    """libpq's ``host`` and ``port`` keywords from a URL's authority, as libpq reads a
    multi-host URL: ``pg-a:5432,pg-b:5433`` is host ``pg-a,pg-b``, port ``5432,5433``
    (tried in order; with ``target_session_attrs=read-write`` libpq keeps the first that
    takes writes, the primary after a failover). (None, None) when the URL names no host."""
    hosts_text = netloc.rpartition("@")[2]
    if not hosts_text:
        return None, None
    hosts, ports = [], []
    for text in hosts_text.split(","):
        host, port = text, ""
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else rest
        elif ":" in text:
            host, _, port = text.rpartition(":")
        if port and (not port.isdigit() or int(port) > 65535):
            raise UrlProblem(f"a port must be a number from 0 to 65535, got {port!r}")
        if not host:
            raise UrlProblem("a host of the list is empty")
        hosts.append(unquote(host))
        ports.append(port)
    if not any(ports):
        return ",".join(hosts), None
    return ",".join(hosts), ",".join(port or "5432" for port in ports)


def check_database_url(raw: str) -> str:
    """As engine/database/db.py builds the database: the path a SQLite file, else PostgreSQL's
    database name, with ``max_connections`` (the pool), ``prepare`` and libpq options; a
    PostgreSQL URL may list several hosts (libpq's multi-host URL)."""
    parts = split(raw, ("sqlite", "postgres", "postgresql"), one_host=False)
    if parts.scheme == "sqlite":
        split(raw, ("sqlite",))  # one host (none): its port checked as before
        return raw
    try:
        postgres_hosts(parts.netloc)
    except UrlProblem as err:  # named with the URL, its password masked, as split() does
        raise UrlProblem(f"{err}; got {mask_url(raw)!r}") from None
    if importlib.util.find_spec("psycopg2") is None:
        # The driver is an extra: a SQLite install does not carry it.
        raise UrlProblem("PostgreSQL needs its driver, which is not installed: pip install "
                         "'herald-notification-service[postgres]'")
    options = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    if "max_connections" in options:
        _whole(options.pop("max_connections"), "max_connections")
    if options.get("prepare", "true").strip().lower() not in _TRUTHS:
        raise UrlProblem(f"prepare must be true or false, got {options['prepare']!r}")
    options.pop("prepare", None)
    attrs = options.get("target_session_attrs")
    if attrs is not None and attrs not in _SESSION_ATTRS:
        # libpq checks this one only when it connects: a typo would pass start-up.
        raise UrlProblem(f"target_session_attrs must be one of {', '.join(_SESSION_ATTRS)}, "
                         f"got {attrs!r}")
    from psycopg2 import ProgrammingError
    from psycopg2.extensions import make_dsn

    try:  # libpq's own parser: an option it does not know fails here, not at connect
        make_dsn(**options)
    except ProgrammingError as err:
        raise UrlProblem(" ".join(str(err).split())) from None
    return raw


SENTINEL_SCHEME = "redis+sentinel"
SENTINEL_PORT = 26379  # Sentinel's own default port
_SENTINEL_OPTIONS = ("sentinel_password",)
_SERVICE = re.compile(r"^[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class SentinelTarget:
    """What ``redis+sentinel://[:password@]host:port[,host:port...]/SERVICE[/DB]`` names:
    the sentinels to ask, the service (the primary's name in their configuration), the
    database number, and the credentials of the Redis servers (``sentinel_password`` in the
    query: the sentinels' own, when they require one)."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None


def _sentinel_host(text: str, raw: str) -> tuple[str, int]:
    host, port = text, ""
    if text.startswith("["):  # [::1]:26379
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise UrlProblem(f"bad sentinel address {text!r}; got {mask_url(raw)!r}")
        port = rest[1:]
    elif ":" in text:
        host, _, port = text.rpartition(":")
    if not host:
        raise UrlProblem(f"a sentinel address has no host; got {mask_url(raw)!r}")
    if not port:
        return host, SENTINEL_PORT
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UrlProblem(f"sentinel port must be a number from 1 to 65535, got {port!r}")
    return host, int(port)


def parse_sentinel_url(raw: str) -> SentinelTarget:
    """The Sentinel URL read whole (urllib reads one host only); any problem is one line."""
    if not raw.startswith(f"{SENTINEL_SCHEME}://"):
        raise UrlProblem(f"must start with {SENTINEL_SCHEME}:// exactly; got {mask_url(raw)!r}")
    rest, _, query = raw[len(SENTINEL_SCHEME) + 3:].partition("?")
    authority, _, path = rest.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
        if not colon:  # redis://secret@host is read by redis-py as a password, not a user
            username, password = None, unquote(user) or None
    if not hosts:
        raise UrlProblem(f"no sentinel address (host:port, comma separated); got "
                         f"{mask_url(raw)!r}")
    sentinels = tuple(_sentinel_host(text, raw) for text in hosts.split(","))
    service, _, db = unquote(path).rstrip("/").partition("/")
    if not service or not _SERVICE.match(service):
        raise UrlProblem("the path must name the service the sentinels watch "
                         f"(/SERVICE or /SERVICE/DB); got {mask_url(raw)!r}")
    if db and not db.isdigit():
        raise UrlProblem(f"the database (after the service) must be a number, got {db!r}")
    options = {k: v[-1] for k, v in parse_qs(query, keep_blank_values=True).items()}
    unknown = sorted(set(options) - set(_SENTINEL_OPTIONS))
    if unknown:
        raise UrlProblem(f"unknown option {unknown[0]!r} in a Sentinel URL (known: "
                         f"{', '.join(_SENTINEL_OPTIONS)})")
    return SentinelTarget(sentinels, service, int(db or 0), username, password,
                          options.get("sentinel_password") or None)


def check_redis_url(raw: str) -> str:
    """As redis-py's from_url reads it: the scheme exactly (it does not lower-case), its
    query options, and a database that is a number (it would take database 0 instead).
    A ``redis+sentinel://`` URL is read by :func:`parse_sentinel_url`."""
    from redis.connection import parse_url

    if raw.lower().startswith(f"{SENTINEL_SCHEME}:"):
        parse_sentinel_url(raw)
        return raw
    parts = split(raw, ("redis", "rediss", "unix", SENTINEL_SCHEME))
    if not raw.startswith(f"{parts.scheme}://"):
        raise UrlProblem(f"must start with {parts.scheme}:// exactly (the Redis client reads "
                         f"no other spelling); got {mask_url(raw)!r}")
    try:
        parse_url(raw)
    except ValueError as err:
        raise UrlProblem(f"{err}; got {mask_url(raw)!r}") from None
    if parts.scheme != "unix" and not _DB_NUMBER.match(unquote(parts.path)):
        raise UrlProblem("the database (the path after the host) must be a number such as "
                         f"/0, got {unquote(parts.path)[1:]!r}")
    return raw


def check_provider_urls(raw: str, urls: list[str]) -> str:
    """Each provider URL has a scheme (its plugin, resolved at start-up by check_providers,
    then reads the rest as a send will)."""
    for n, url in enumerate(urls, 1):
        try:
            scheme = urlsplit(url).scheme
        except ValueError as err:
            raise UrlProblem(f"{err}; got {mask_url(url)!r}") from None
        if not scheme and n > 1:
            # Not quoted: it may be the tail of a password that holds a blank.
            raise UrlProblem(f"URL {n} has no scheme (URLs are separated by blanks: write a "
                             "blank inside one as %20)")
        if not scheme:
            raise UrlProblem("expected a provider URL such as smtp://host:25 or inbox://, "
                             f"got {mask_url(url)!r}")
    return raw
