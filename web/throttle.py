"""Attempt limits of the web application, counted in Redis and shared by every process.

Sign-in (and its second step) counts failures only, in 15-minute windows, three ways apart:
- per address and client IP together: 10 failures, then a wall for that pair only;
- per client IP: 50 failures (an office behind one IP mistypes more than a person);
- per account, from anywhere: after 5 failures each further try waits a delay that doubles
  from 1 s up to 60 s after the last failure. Never a wall: a stranger's guesses can make
  the owner, signing in from a fresh address, wait a minute at most, never lock them out,
  and a guesser spread over many IPs gets one try a minute.
A browser where the person signed in before carries a device cookie (web/devices.py): the
account's delay does not hold it; its own failures are counted instead, and past
``devices.FAILURES`` it waits with every other device. A right password from a new device
still waits (else the wait would tell a guesser which password was right).
A success counts nothing and clears its pair. The reset form counts every request (each
may mail), per address and per IP. The editor's costly requests (preview, draft save, test
send) are limited per person, per minute (settings, for a load test's sake).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import unicodedata

from engine import runtime
from engine.people import users
from engine.people.errors import PeopleError
from engine.queue import redis_scripts
from web import devices

WINDOW = 15 * 60
PAIR_FAILURES = 10
IP_FAILURES = 50
FREE_FAILURES = 5  # per account, before the delay starts
MAX_DELAY = 60
RESET_LIMITS = {"address": 3, "ip": 20}
# Per person and per minute: HERALD_RATE_LIMIT_WEB_PREVIEW, _DRAFT, _TEST_SEND.
PER_MINUTE_SETTINGS = {"preview": "rate_limit_web_preview", "draft": "rate_limit_web_draft",
                       "test-send": "rate_limit_web_test_send"}


def _digest(value: str) -> str:
    # Hashed: Redis is no place to keep a list of the addresses people typed.
    return hashlib.sha256(value.strip().lower().encode("utf-8", "replace")).hexdigest()[:32]


def _account(typed: str) -> str:
    """One account, however its address was spelt: the form Herald stores (the domain in
    its ASCII form, so full-width letters and ideographic dots are the plain ones), then
    NFKC and case-folded (a full-width local part too); anything else (a user id, text
    that is no address) NFKC and case-folded. Each spelling counted apart would give a
    guesser a fresh count per spelling."""
    with contextlib.suppress(PeopleError):
        typed = users.normalize_email(typed)
    return unicodedata.normalize("NFKC", typed).strip().casefold()


def _key(kind: str, what: str, value: str, window: int) -> str:
    return f"herald:web:{kind}:{what}:{_digest(value)}:{window}"


def _window_left(now: float, length: int = WINDOW) -> int:
    return int(length - now % length) + 1


def _keys(kind: str, account: str, ip: str, window: int) -> tuple[str, str, str, str]:
    account = _account(account)
    return (_key(kind, "pair", f"{account}\n{ip}", window), _key(kind, "ip", ip, window),
            _key(kind, "account", account, window), _key(kind, "last", account, window))


def delay_after(failures: int) -> int:
    """Seconds an account's next try waits after its last failure."""
    if failures < FREE_FAILURES:
        return 0
    return min(MAX_DELAY, 2 ** (failures - FREE_FAILURES))


def _device_key(kind: str, device: str, window: int) -> str:
    return _key(kind, "device", device, window)


def wait_before(kind: str, account: str, ip: str, device: str | None = None) -> int | None:
    """Before checking a password or a code: None when this try may go ahead, else the
    seconds to wait. ``account``: the address typed (sign-in) or the user's id (second
    step); ``device``: the nonce of a valid device cookie of that person (web/devices.py),
    which the account's delay does not hold while the device has failures to spare.
    Counts nothing."""
    now = time.time()
    window = int(now // WINDOW)
    pair, by_ip, by_account, last = _keys(kind, account, ip, window)
    keys = [pair, by_ip, by_account, last]
    if device:
        keys.append(_device_key(kind, device, window))
    counts = runtime.redis().mget(keys)
    pair_n, ip_n, account_n = (int(c or 0) for c in counts[:3])
    if pair_n >= PAIR_FAILURES or ip_n >= IP_FAILURES:
        return _window_left(now)
    if device and int(counts[4] or 0) < devices.FAILURES:
        return None
    delay = delay_after(account_n)
    if delay and counts[3] is not None:
        left = float(counts[3]) + delay - now
        if left > 0:
            return int(left) + 1
    return None


def failed(kind: str, account: str, ip: str, device: str | None = None) -> None:
    """Count one failed try: a trusted device's against that device (until it has none to
    spare), any other against the account and its delay."""
    now = time.time()
    window = int(now // WINDOW)
    pair, by_ip, by_account, last = _keys(kind, account, ip, window)
    redis = runtime.redis()
    if device:
        device_key = _device_key(kind, device, window)
        if int(redis.get(device_key) or 0) < devices.FAILURES:
            pipe = redis.pipeline()
            for key in (pair, by_ip, device_key):
                pipe.incr(key)
                pipe.expire(key, WINDOW + 60)
            pipe.execute()
            return
    pipe = redis.pipeline()
    for key in (pair, by_ip, by_account):
        pipe.incr(key)
        pipe.expire(key, WINDOW + 60)
    pipe.set(last, repr(now), ex=WINDOW + 60)
    pipe.execute()


def succeeded(kind: str, account: str, ip: str) -> None:
    """A right password or code: its pair starts afresh (the account's count stays)."""
    pair = _keys(kind, account, ip, int(time.time() // WINDOW))[0]
    runtime.redis().delete(pair)


def attempt(kind: str, address: str, ip: str) -> int | None:
    """The reset form: count one request; None when allowed, else the seconds to wait."""
    now = time.time()
    window = int(now // WINDOW)
    pipe = runtime.redis().pipeline()
    keys = [(_key(kind, "address", _account(address), window), RESET_LIMITS["address"]),
            (_key(kind, "ip", ip, window), RESET_LIMITS["ip"])]
    for key, _ in keys:
        pipe.incr(key)
        pipe.expire(key, WINDOW + 60)
    counts = pipe.execute()[::2]
    if any(count > limit for count, (_, limit) in zip(counts, keys, strict=True)):
        return _window_left(now)
    return None


def per_minute(kind: str) -> int:
    return int(getattr(runtime.settings(), PER_MINUTE_SETTINGS[kind]))


def per_person(kind: str, user_id: str) -> int | None:
    """Count one of a person's costly requests; None when allowed, else the seconds until
    the minute ends."""
    now = time.time()
    key = _key(kind, "person", user_id, int(now // 60))
    # On the thread's own connection: the editor's preview pays this at every keystroke.
    count = redis_scripts.commands(runtime.redis(), ("INCR", key), ("EXPIRE", key, 120))[0]
    return _window_left(now, 60) if count > per_minute(kind) else None
