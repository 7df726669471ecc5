"""The one place a Redis client is made from ``HERALD_REDIS_URL``.

A ``redis://`` (``rediss://``, ``unix://``) URL names one server. A ``redis+sentinel://``
URL names the sentinels that watch a primary and its replicas (config/url_settings.py): the
client asks them for the primary before each new connection, and a connection that finds
the old primary gone or demoted (READONLY) is closed, so a failover is followed by the
client itself. Until the sentinels have promoted a replica the client raises a connection
error like a Redis that is down: the API answers 503, the worker's patient client waits
(engine/queue/redis_outages.py).
"""

from __future__ import annotations

from typing import Any

from redis import Redis
from redis.sentinel import Sentinel, SentinelManagedConnection

from config.url_settings import SENTINEL_SCHEME, parse_sentinel_url

# A sentinel is asked a short question; one that does not answer is skipped for the next.
SENTINEL_TIMEOUT = 1.0


class _FollowingConnection(SentinelManagedConnection):
    """A connection that asks the sentinels for the primary at every attempt to connect.

    redis-py's own asks once per ``connect()``, but a command sent on a connection whose
    socket was dropped reconnects through ``connect_check_health``, which retries the
    address it had: with the worker's endless retry that is the dead primary, forever.
    """

    def connect_check_health(self, check_health: bool = True,
                             retry_socket_connect: bool = True) -> None:
        if self._sock:
            return
        if not self.connection_pool.is_master:
            super().connect_check_health(check_health, retry_socket_connect)
            return

        def attempt() -> None:
            # MasterNotFoundError is a ConnectionError: retried like a Redis that is down.
            self.host, self.port = self.connection_pool.get_master_address()
            super(_FollowingConnection, self).connect_check_health(
                check_health=check_health, retry_socket_connect=False)

        self.retry.call_with_retry(attempt, lambda error: self.disconnect())


def is_sentinel(url: str) -> bool:
    return url.startswith(f"{SENTINEL_SCHEME}://")


def connect(url: str, **options: Any) -> Redis:
    """A client for ``url``: one server, or the primary the sentinels name now.

    ``options`` are the connection's (timeouts, retry, health check), the same for both.
    """
    if not is_sentinel(url):
        return Redis.from_url(url, **options)
    target = parse_sentinel_url(url)
    asking: dict[str, Any] = {"socket_timeout": SENTINEL_TIMEOUT,
                              "socket_connect_timeout": SENTINEL_TIMEOUT}
    if target.sentinel_password:
        asking["password"] = target.sentinel_password
    sentinel = Sentinel(list(target.sentinels), sentinel_kwargs=asking)
    return sentinel.master_for(target.service, redis_class=Redis, db=target.db,
                               username=target.username, password=target.password,
                               connection_class=_FollowingConnection, **options)
