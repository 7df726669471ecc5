"""Rate limits and repeat suppression for the tracking endpoints (/t/o, /t/c, /t/u).

A token is a capability anyone holding the mail can replay: 500 requests of one token made
500 rows. Each request is counted per token and per client address in a one-minute window
(over either: 429); an open or click of one recipient (and, for a click, one link) seen
again within REPEAT_SECONDS is answered as usual but recorded once, so reports count people,
not a scanner's or a reload's requests. One Redis round trip per request.
"""

from __future__ import annotations

import hashlib
import time

from engine import runtime

PER_TOKEN_PER_MINUTE = 20
# Mail providers fetch images through a few proxy addresses (Gmail's image proxy): high.
PER_IP_PER_MINUTE = 1200
REPEAT_SECONDS = 60

_SCRIPT = """
local t = redis.call('INCR', KEYS[1])
if t == 1 then redis.call('EXPIRE', KEYS[1], 120) end
local i = redis.call('INCR', KEYS[2])
if i == 1 then redis.call('EXPIRE', KEYS[2], 120) end
if t > tonumber(ARGV[1]) or i > tonumber(ARGV[2]) then return -1 end
if KEYS[3] == '' then return 1 end
if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[3]) then return 1 end
return 0
"""
LIMITED, REPEAT, RECORD = -1, 0, 1


def _digest(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def admit(kind: str, token: str, ip: str, seen: tuple[object, ...] | None) -> int:
    """LIMITED (answer 429), REPEAT (answer, record nothing) or RECORD. ``seen`` names the
    event for repeat suppression (notification, recipient, link), None to always record."""
    window = int(time.time() // 60)
    keys = [f"herald:tr:tok:{_digest(kind, token)}:{window}",
            f"herald:tr:ip:{ip}:{window}",
            f"herald:tr:seen:{kind}:{_digest(*seen)}" if seen is not None else ""]
    return int(runtime.redis().eval(_SCRIPT, 3, *keys, PER_TOKEN_PER_MINUTE,
                                    PER_IP_PER_MINUTE, REPEAT_SECONDS))
