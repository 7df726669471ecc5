"""`herald apply`: create or update tenants, templates, senders and keys from one document.

The whole document is checked before anything is written (engine/provisioning/checking.py),
and written in one transaction (engine/provisioning/writing.py): a bad file changes nothing.
Re-applying an unchanged file changes nothing.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any

from engine.database.db import database
from engine.provisioning.checking import document_problems
from engine.provisioning.document import ApplyError, Outcome
from engine.provisioning.references import resolve_references
from engine.provisioning.writing import Writer


def apply_document(doc: Any, *, production: bool = False,
                   environ: Mapping[str, str] | None = None) -> Outcome:
    """Resolve the document's `${NAME}` references from ``environ`` (the process's
    environment by default), check the whole of it, then write it in one transaction.

    ``production`` refuses what the settings refuse there (the dev inbox as a provider).
    """
    doc = copy.deepcopy(doc)
    resolution = resolve_references(doc, os.environ if environ is None else environ)
    problems = resolution.problems + document_problems(doc, production=production)
    if problems:
        # A check may quote a URL: the values references brought in are hidden again.
        raise ApplyError([resolution.hide(p) for p in problems])
    outcome = Outcome()
    writer = Writer(outcome)
    with database.atomic():
        for i, account in enumerate(doc.get("accounts") or []):
            writer.account(account, f"accounts[{i}]")
    return outcome
