"""Which custom email header names a client may set (emailOptions.customHeaders).

Refused: the address, envelope and message headers Herald writes itself, and every header
a receiving server reads as trust or routing (spam verdicts, authentication results,
signatures, trace and envelope headers). A client setting one could make its mail look
checked or clean to a filter that trusts headers it did not add, or steer replies. They are
refused by pattern, so the next vendor's variant (``X-MS-Exchange-Organization-SCL``,
``X-Google-DKIM-Signature``, ``X-Original-Authentication-Results``) is refused too.
"""

from __future__ import annotations

import re

# Address, envelope and message headers, and anything Herald sets itself.
REFUSED_HEADERS = frozenset({
    "from", "sender", "to", "cc", "bcc", "reply-to", "resent-from", "resent-sender",
    "resent-to", "resent-cc", "resent-bcc", "resent-date", "resent-message-id", "return-path",
    "envelope-to", "delivered-to", "x-original-to", "received", "return-receipt-to",
    "disposition-notification-to", "subject", "date", "message-id", "in-reply-to",
    "references", "mime-version", "content-type", "content-transfer-encoding",
    "content-disposition", "content-id", "dkim-signature", "arc-seal",
    "arc-message-signature", "arc-authentication-results", "authentication-results",
    "list-unsubscribe", "list-unsubscribe-post", "x-priority", "importance", "sensitivity",
    "priority", "bounces-to", "errors-to",
})
# Trust and routing headers, as whole-name patterns (lower case).
TRUST_AND_ROUTING = re.compile("|".join((
    r"x-svc-.*", r"resent-.*", r"content-.*", r"list-.*",
    r"x-ms-exchange-.*", r"x-microsoft-.*", r"x-forefront-.*", r"x-ms-has-attach",
    r".*spam.*", r".*virus.*", r".*phish.*",                  # filter verdicts of any vendor
    r"(x-)?received(-.*)?", r".*-received",                   # trace: Received, Received-SPF
    r".*dkim.*", r".*domainkey.*", r"arc-.*", r".*authentication-results.*",
    r"mail-reply-to", r"mail-followup-to", r"(x-)?original-.*", r"x-envelope-.*",
    r"envelope-.*", r"apparently-to", r"return-path", r"delivered-to", r"x-forwarded-.*",
    r"x-(sender|receiver|rcpt-to|mail-from)", r"x-authenticated-.*", r"x-auth-.*",
    r"x-sender-id", r"x-originating-ip", r"x-report-abuse(-to)?", r"feedback-id",
)))


def header_name_refused(name: str) -> bool:
    """Whether a client may not set ``name`` (case-insensitive, as every reader compares)."""
    lowered = name.lower()
    return lowered in REFUSED_HEADERS or TRUST_AND_ROUTING.fullmatch(lowered) is not None
