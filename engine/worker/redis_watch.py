"""Notice that Redis lost what it held, so the reconciler can act at once.

Two signs, read in one round trip: Redis's ``run_id`` (INFO server) changes when the server
restarts or another one takes over (a failover to a replica), and the marker key the workers
keep disappears with a FLUSHALL, a restart without persistence or an eviction. A restart with
persistence keeps the marker but may have lost its last writes: the ``run_id`` tells.
"""

from __future__ import annotations

import uuid

from engine import runtime

MARKER_KEY = "herald:redis:marker"
_losses = 0


class RedisWatch:
    """One process's memory of the Redis it talks to."""

    def __init__(self) -> None:
        self._run_id: str | None = None
        self._marker: bytes | None = None

    def loss(self) -> str | None:
        """Why Redis may have lost jobs since the last look (or, at the first look, since any
        worker last kept the marker), else None."""
        global _losses
        redis = runtime.redis()
        with redis.pipeline(transaction=False) as pipe:
            pipe.info("server")
            pipe.get(MARKER_KEY)
            info, marker = pipe.execute(raise_on_error=False)
        if isinstance(marker, Exception):
            raise marker
        # A Redis whose ACL refuses INFO still has the marker to tell a loss by.
        run_id = "" if isinstance(info, Exception) else str(info.get("run_id", ""))
        reason = None
        if marker is None:
            reason = "Redis lacks Herald's marker key (emptied, a new server, or a first start)"
            marker = _keep_marker()
        elif self._marker is not None and marker != self._marker:
            reason = "Redis was emptied since the last look"
        elif self._run_id is not None and run_id != self._run_id:
            reason = "Redis restarted, or another server took over (new run_id)"
        self._run_id, self._marker = run_id, marker
        if reason:
            _losses += 1
        return reason


def _keep_marker() -> bytes:
    """Set the marker, or read the one another worker set first."""
    redis = runtime.redis()
    token = uuid.uuid4().hex.encode()
    if redis.set(MARKER_KEY, token, nx=True):
        return token
    return redis.get(MARKER_KEY) or token


def losses() -> int:
    """How many losses this process has noticed: a change means Redis forgot its records."""
    return _losses
