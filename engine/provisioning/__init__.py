"""Templates and tenants as code: `herald apply` (check the whole document, then write it in
one transaction), `herald export` (the same format back) and the demo tenant of `herald dev`.
"""

from engine.provisioning.applying import apply_document
from engine.provisioning.checking import check_document
from engine.provisioning.document import NAME_RULE, ApplyError, Outcome, valid_name, version_fields

__all__ = ["NAME_RULE", "ApplyError", "Outcome", "apply_document", "check_document",
           "valid_name", "version_fields"]
