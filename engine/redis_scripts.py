"""The request path's Lua scripts, each sent as one command on a connection of its own.

A send makes two script calls (the admission, the enqueue). Through redis-py's ``Script``
each goes the client's general way: a pool checkout that polls the socket, a retry
wrapper, the arguments encoded one by one, the release. On the bench machine that cost
114-150 µs of CPU per call, against 60-78 µs for packing, sending and reading the same
command on a connection directly (docs/performance.md, fourth round). Anything unexpected
(a dropped connection, the server's script cache flushed) goes to redis-py's own call,
which reconnects, retries and loads the script as before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from redis import Redis
from redis.connection import AbstractConnection
from redis.exceptions import RedisError


class DirectScript:
    """A registered script, called on one connection per thread (outside the pool)."""

    def __init__(self, redis: Redis, source: str) -> None:
        self._script = redis.register_script(source)
        self._pool = redis.connection_pool
        self._local = threading.local()

    def _connection(self) -> AbstractConnection:
        local = self._local
        connection = getattr(local, "connection", None)
        if connection is None or local.pid != os.getpid():  # never a parent's socket
            pool = self._pool
            connection = local.connection = pool.connection_class(**pool.connection_kwargs)
            local.pid = os.getpid()
        return connection

    def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        connection = self._connection()
        try:
            connection.send_packed_command(
                connection.pack_command("EVALSHA", self._script.sha, len(keys), *keys, *args),
                check_health=False)
            return connection.read_response()
        except (RedisError, OSError):
            # Never reuse a connection in an unknown state; redis-py's path does the rest.
            self._local.connection = None
            connection.disconnect()
            return self._script(keys=keys, args=args)
