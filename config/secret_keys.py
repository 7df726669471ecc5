"""How strong a production HERALD_SECRET_KEY must be: not a key this repository
publishes, long enough, and neither low in variety nor a guessable pattern. Every key
that signs links and opens stored credentials is checked here at start-up."""

from __future__ import annotations

import collections
import math

DEV_SECRET_KEY = "herald-development-secret-key-not-for-production"
# Keys this repository publishes, now or in its history (tests/config/test_settings.py
# scans the whole tree, tests and bench included, and fails on a key missing here that the
# entropy floor would take): anyone can read them, so with one anyone forges click
# redirects, unsubscribes anyone and opens every stored credential. Checking "anywhere in
# the repository" at start-up is not possible (a deployment has no repository), so the
# rule is this list, an entropy floor and zxcvbn's guess count; the tests' own key is made
# afresh each run. The tests also read every key deploy/'s manifests, the chart's values
# and the example env files give, so a new placeholder cannot ship unrefused.
PUBLISHED_SECRET_KEYS = frozenset({
    DEV_SECRET_KEY,
    "test-secret-key-0123456789-abcdefghijklmnop",  # the tests' key once
    "bench-secret-key-0123456789-abcdefghijklmnop",  # bench/common.py
    "CHANGE-ME-at-least-32-characters-of-randomness",  # the manifests' and chart's once
    "CHANGE-ME-generate-your-own-with-secrets.token_urlsafe-48",  # deploy/kubernetes/
})
# Shannon's estimate over the key's own characters, times its length: 'x' * 40 has none,
# a word repeated has little; secrets.token_urlsafe(48) has about 350 bits.
MIN_SECRET_BITS = 100
# zxcvbn's estimate of the guesses a key needs, as a power of ten: it sees what Shannon's
# count cannot (a digit run repeated, a keyboard row, words). 10^24 is about 80 bits: ten
# digits repeated score 10^2, a keyboard row 10^16, while the lowest of a thousand random
# 32-character hex keys (128 bits, zxcvbn finding dates and runs in some) scored 10^28.
# Only the first characters are scored: zxcvbn's time grows with the length, and a
# longer key only adds guesses.
MIN_SECRET_GUESSES_LOG10 = 24
SCORED_SECRET_PREFIX = 64

_GENERATE = "python -c 'import secrets; print(secrets.token_urlsafe(48))'"


def secret_key_problem(secret: str) -> str | None:
    """What is wrong with ``secret`` as a production key (the rule broken), or None."""
    if len(secret) < 32:
        return "must be at least 32 characters in production"
    if secret.strip() in PUBLISHED_SECRET_KEYS:
        return ("is a published example key (rule: no key published in Herald's "
                f"repository): generate your own ({_GENERATE})")
    if (bits := entropy_bits(secret)) < MIN_SECRET_BITS:
        return (f"has too little entropy (rule: at least {MIN_SECRET_BITS} bits by "
                f"Shannon's estimate of its characters; this key has {bits:.0f}): generate "
                f"one with {_GENERATE}")
    if (guesses := guesses_log10(secret)) < MIN_SECRET_GUESSES_LOG10:
        return (f"follows a guessable pattern (rule: at least 10^{MIN_SECRET_GUESSES_LOG10} "
                f"guesses by zxcvbn's estimate; this key needs about 10^{guesses:.0f}): "
                f"generate one with {_GENERATE}")
    return None


def entropy_bits(text: str) -> float:
    """Shannon's estimate of ``text``'s entropy in bits: its length times the entropy of
    its own character frequencies. A floor, not a proof: it catches a repeated character,
    a repeated word and other low-variety keys, not a key copied from somewhere else."""
    if not text:
        return 0.0
    counts = collections.Counter(text)
    total = len(text)
    return -total * sum(n / total * math.log2(n / total) for n in counts.values())


def guesses_log10(text: str) -> float:
    """zxcvbn's estimate of how many guesses ``text`` needs, as a power of ten (its
    sequences, repeats, keyboard patterns and dictionary words counted)."""
    from zxcvbn import zxcvbn  # at use: only production start-up pays its import

    return float(zxcvbn(text[:SCORED_SECRET_PREFIX])["guesses_log10"])
