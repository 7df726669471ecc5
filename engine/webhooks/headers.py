"""Custom webhook header rules (spec 6.2, docs/api.md); errors sit under
notifications.validation_failed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import islice

from engine.formats.header_text import TOKEN

MAX_HEADERS = 16
MAX_NAME = 64
MAX_VALUE = 1024
MAX_TOTAL_BYTES = 4096
# Visible ASCII, space and tab: no control character (CR, LF, NUL, DEL...) and no obs-text,
# whose bytes a receiver could read in any charset and http.client cannot always encode.
VALUE = re.compile(r"[\t\x20-\x7e]*")
REFUSED = {"host", "authorization", "cookie", "set-cookie", "proxy-authorization",
           "content-length", "content-type", "transfer-encoding", "connection", "upgrade",
           "te", "trailer", "expect", "keep-alive", "idempotency-key", "user-agent"}
# Anything that looks like it carries a credential, token or secret (spec 6.2, docs/api.md): these
# anywhere in the name...
CREDENTIAL = re.compile(r"auth|token|secret|passw|passphrase|credential|api[-_]?key|session|"
                        r"cookie|signature|bearer|private|jwt|hmac|csrf|xsrf|"
                        r"(access|client)[-_]?key", re.IGNORECASE)
# ...these as whole words of it (split at - _ .), being short enough to sit inside others
# (X-Footprint holds "otp")...
CREDENTIAL_WORDS = {"pass", "pwd", "passwd", "otp", "totp", "pin", "sig", "sid"}
# ...and a "key" (X-Functions-Key, Ocp-Apim-Subscription-Key, X-Key), unless the word
# before it says the key labels data rather than grants access (Idempotency-Key, and
# Bitbucket's X-Event-Key).
DATA_KEYS = {"idempotency", "event", "cache", "routing", "partition", "dedup",
             "deduplication", "sort", "message", "correlation"}


def name_sendable(name: object) -> bool:
    """Matched whole: ``$`` in ``re.match`` would let a trailing newline through."""
    return isinstance(name, str) and TOKEN.fullmatch(name) is not None


def value_sendable(value: object) -> bool:
    return isinstance(value, str) and VALUE.fullmatch(value) is not None


def unsendable_headers(headers: Mapping[str, object]) -> list[str]:
    """Names of headers that cannot go on the wire; refused at send, but a row queued before
    that rule may still hold one, and posting it would raise on every attempt."""
    return [name for name, value in headers.items()
            if not (name_sendable(name) and value_sendable(value))]


def looks_like_credential(lowered: str) -> bool:
    """``lowered``, a header name in lower case, looks like it carries a credential."""
    if CREDENTIAL.search(lowered):
        return True
    words = re.split(r"[-_.]+", lowered)
    return any(word in CREDENTIAL_WORDS or (word in ("key", "keys") and (
        index == 0 or words[index - 1] not in DATA_KEYS))
        for index, word in enumerate(words))


def validate_webhook_headers(headers: object) -> list[tuple[str, str, str]]:
    """Every broken rule as (field path, error code, message)."""
    base = "webhookOptions.headers"
    if headers is None:
        return []
    if not isinstance(headers, Mapping):
        return [(base, "notifications.webhook.custom_headers.invalid",
                 "must be an object of string values")]
    problems: list[tuple[str, str, str]] = []
    if len(headers) > MAX_HEADERS:
        problems.append((base, "notifications.webhook.custom_headers.too_many",
                         f"at most {MAX_HEADERS} headers"))
    total = 0
    seen: set[str] = set()
    for name, value in islice(headers.items(), MAX_HEADERS):  # past the limit: too_many
        path = f"{base}.{name}"
        total += len(str(name).encode()) + len(str(value).encode())
        if not name_sendable(name):
            problems.append((path, "notifications.webhook.custom_headers.name_invalid",
                             "not a valid header name"))
        elif len(name) > MAX_NAME:
            problems.append((path, "notifications.webhook.custom_headers.name_too_long",
                             f"at most {MAX_NAME} characters"))
        lowered = name.lower()
        if (lowered in REFUSED or lowered.startswith(("x-service-", "x-herald-"))
                or looks_like_credential(lowered)):
            problems.append((path, "notifications.webhook.custom_headers.name_not_permitted",
                             "this header is set by Herald or may carry a credential"))
        if lowered in seen:
            problems.append((path, "notifications.webhook.custom_headers.name_duplicated",
                             "duplicate header name"))
        seen.add(lowered)
        if not value_sendable(value):
            problems.append((path, "notifications.webhook.custom_headers.value_invalid",
                             "must be a string of printable ASCII characters, spaces and tabs"))
        elif len(value) > MAX_VALUE:
            problems.append((path, "notifications.webhook.custom_headers.value_too_long",
                             f"at most {MAX_VALUE} characters"))
    if total > MAX_TOTAL_BYTES:
        problems.append((base, "notifications.webhook.custom_headers.too_large",
                         f"at most {MAX_TOTAL_BYTES} bytes in all"))
    return problems
