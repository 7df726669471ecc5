"""`herald apply`: create or update tenants, templates, senders and keys from one document.

The whole document is checked before anything is written (engine/provisioning/checking.py),
and written in one transaction (engine/provisioning/writing.py): a bad file changes nothing.
Re-applying an unchanged file changes nothing.
"""

from __future__ import annotations

from typing import Any

from engine.provisioning.checking import check_document
from engine.provisioning.document import Outcome
from engine.provisioning.writing import Writer
from engine.store.db import database


def apply_document(doc: Any) -> Outcome:
    """Check the whole document, then write it in one transaction."""
    check_document(doc)
    outcome = Outcome()
    writer = Writer(outcome)
    with database.atomic():
        for i, account in enumerate(doc.get("accounts") or []):
            writer.account(account, f"accounts[{i}]")
    return outcome
