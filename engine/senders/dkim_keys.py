"""DKIM key pairs: one RSA 2048 key per selector, private keys encrypted at rest.

``hd1`` signs; ``hd2`` stands by, published from the start, so a key can be replaced
without a moment in which receivers see no key (docs/senders.md, "Key rotation").
"""

from __future__ import annotations

import base64
import json
from typing import Any

from engine.database.models import Sender
from engine.plugins.contracts import DkimKey
from engine.senders.names import SELECTORS, selector_of

KEY_BITS = 2048
SIGNING_SELECTOR = SELECTORS[0]


def new_keys() -> str:
    """The JSON stored (encrypted) in ``Sender.dkim_keys``: the signing selector and a PEM
    private key per selector."""
    # cryptography is imported here and in public_txt, not at start: keys are made when a
    # domain is added, read when its records are listed (docs/performance.md, "Memory at
    # rest").
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    keys = {}
    for selector in SELECTORS:
        key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
        keys[selector] = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()).decode("ascii")
    return json.dumps({"signing": SIGNING_SELECTOR, "keys": keys})


def _stored(sender: Sender) -> dict[str, Any]:
    return json.loads(sender.dkim_keys) if sender.dkim_keys else {"keys": {}}


def public_txt(private_pem: str) -> str:
    """The TXT value receivers read the public key from (RFC 6376 3.6.1)."""
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private_pem.encode("ascii"), password=None)
    der = key.public_key().public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    return f"v=DKIM1; k=rsa; p={base64.b64encode(der).decode('ascii')}"


def signing_key(sender: Sender) -> DkimKey | None:
    """What signs mail from this domain, or None: no keys, or the signing selector's CNAME
    was not in place at the last check (a signature no receiver could verify is worse than
    none)."""
    stored = _stored(sender)
    selector = stored.get("signing")
    pem = stored["keys"].get(selector)
    in_place = any(r["purpose"] == "dkim" and selector_of(r) == selector
                   and r.get("status") == "verified" for r in sender.records or [])
    if not pem or not in_place:
        return None
    return DkimKey(domain=sender.value, selector=selector, private_key=pem.encode("ascii"))


def published_records() -> list[dict[str, str]]:
    """The TXT records the operator publishes in HERALD_DKIM_ZONE (``herald dkim records``):
    one per selector of every domain with keys whose request has not expired."""
    rows = (Sender.select().where(Sender.kind == "domain", Sender.dkim_keys.is_null(False),
                                  Sender.status != "expired")
            .order_by(Sender.value, Sender.id))
    out: list[dict[str, str]] = []
    for sender in rows:
        keys = _stored(sender)["keys"]
        for record in sender.records or []:
            pem = keys.get(selector_of(record)) if record["purpose"] == "dkim" else None
            if pem:
                out.append({"host": record["value"], "type": "TXT", "value": public_txt(pem)})
    return out
