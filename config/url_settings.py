"""The URL settings, each read the way the client that uses it will read it.

A URL the client would read differently from what it says (``redis://host/notadb``, which
redis-py silently takes as database 0), or refuse only at the first connection, is refused
at start-up with one line. A URL is quoted in a message only through ``mask_url``: its user
and password never reach a terminal or a log.
"""

from __future__ import annotations

import importlib.util
import re
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from config.redaction import mask_url

_TRUTHS = ("true", "false", "1", "0", "yes", "no", "on", "off")
_DB_NUMBER = re.compile(r"^/?(\d+)?$")


class UrlProblem(ValueError):
    """Why a URL setting is unusable (its text never holds a password)."""


def split(raw: str, schemes: tuple[str, ...]) -> SplitResult:
    """``raw`` split as urllib does (the scheme lower-cased), its scheme and port checked."""
    try:
        parts = urlsplit(raw)
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


def check_database_url(raw: str) -> str:
    """As engine/store/db.py builds the database: the path a SQLite file, else PostgreSQL's
    database name, with ``max_connections`` (the pool), ``prepare`` and libpq options."""
    parts = split(raw, ("sqlite", "postgres", "postgresql"))
    if parts.scheme == "sqlite":
        return raw
    if importlib.util.find_spec("psycopg2") is None:
        # The driver is an extra: a SQLite install does not carry it.
        raise UrlProblem("PostgreSQL needs its driver, which is not installed: pip install "
                         "'herald[postgres]'")
    options = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
    if "max_connections" in options:
        _whole(options.pop("max_connections"), "max_connections")
    if options.get("prepare", "true").strip().lower() not in _TRUTHS:
        raise UrlProblem(f"prepare must be true or false, got {options['prepare']!r}")
    options.pop("prepare", None)
    from psycopg2 import ProgrammingError
    from psycopg2.extensions import make_dsn

    try:  # libpq's own parser: an option it does not know fails here, not at connect
        make_dsn(**options)
    except ProgrammingError as err:
        raise UrlProblem(" ".join(str(err).split())) from None
    return raw


def check_redis_url(raw: str) -> str:
    """As redis-py's from_url reads it: the scheme exactly (it does not lower-case), its
    query options, and a database that is a number (it would take database 0 instead)."""
    from redis.connection import parse_url

    parts = split(raw, ("redis", "rediss", "unix"))
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
