"""Templates and tenants as code: `herald apply` (check the whole document, then write it in
one transaction), `herald export` (the same format back) and the demo tenant of `herald dev`.
"""

from engine.provisioning.applying import (
    CHANNEL_FIELDS,
    NAME_RULE,
    ApplyError,
    Outcome,
    apply_document,
    check_document,
    valid_name,
)

__all__ = ["CHANNEL_FIELDS", "NAME_RULE", "ApplyError", "Outcome", "apply_document",
           "check_document", "valid_name"]
