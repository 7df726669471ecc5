"""DKIM signatures (RFC 6376) on the bytes the SMTP provider sends, with dkimpy: the engine
hands over the key of a verified domain in ``OutboundEmail.dkim`` (docs/senders.md).

relaxed/relaxed canonicalisation, which survives the re-folding and white space changes
relays make; the headers that matter to a reader and to a forger are signed, and From is
signed twice (oversigned), so no second From can be added under the signature.
"""

from __future__ import annotations

from types import ModuleType

from engine.plugin_api import OutboundEmail, message_bytes

SIGNED_HEADERS = (b"from", b"to", b"cc", b"reply-to", b"subject", b"date", b"message-id",
                  b"mime-version", b"content-type", b"list-unsubscribe",
                  b"list-unsubscribe-post")
# dkimpy, with the dnspython it imports (about 3 MiB of a process's memory), is imported by
# the first message signed, not at start: a process that sends nothing signed never needs
# it (docs/performance.md, "Memory at rest").
_dkim: ModuleType | None = None


def _dkimpy() -> ModuleType:
    """dkimpy's ``dkim``, imported once."""
    global _dkim
    if _dkim is None:
        import dkim

        _dkim = dkim
    return _dkim


def _present(content: bytes) -> list[bytes]:
    head = content.split(b"\r\n\r\n", 1)[0].lower()
    names = {line.split(b":", 1)[0].strip() for line in head.split(b"\r\n")
             if line and line[:1] not in (b" ", b"\t")}
    return [name for name in SIGNED_HEADERS if name in names] + [b"from"]


def wire_bytes(message: OutboundEmail) -> bytes:
    """The message as sent: signed when it carries a DKIM key, else as built."""
    content = message_bytes(message.mime)
    key = message.dkim
    if key is None:
        return content
    signature = _dkimpy().sign(content, key.selector.encode("ascii"),
                               key.domain.encode("ascii"), key.private_key,
                               canonicalize=(b"relaxed", b"relaxed"),
                               include_headers=_present(content), linesep=b"\r\n")
    return signature + content
