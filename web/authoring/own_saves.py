"""An editor page's own saves, so that its last hand-over is never refused by the save
before it.

A page that is left hands its unsaved text to a keepalive request carrying the draft
revision the page last heard of. On a busy machine the page's previous autosave can still
be on its way then: it lands first, the draft's revision moves on, and the hand-over, made
from the revision before, was refused as a conflict: the last edit was lost. The server
remembers which page wrote the draft's current revision (Redis, an hour); a save from that
same page, made from an earlier revision of the same draft, is its own successor and
goes on; so is a Publish, which posts the page's whole form as its autosave may still be on
its way. A save from another page or tab is still a conflict (engine/authoring/drafts.py).
"""

from __future__ import annotations

import re

from engine import runtime
from engine.authoring.drafts import Basis
from engine.catalog import versions
from engine.database.models import Template, TemplateVersion

KEEP_SECONDS = 3600
_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _key(template: Template) -> str:
    return f"herald:draft-writer:{template.id}"


def basis_for(template: Template, basis: Basis, page: str | None) -> Basis:
    """``basis``, or the draft's current revision when this page wrote it since."""
    if not page or not _TOKEN.fullmatch(page):
        return basis
    draft = versions.current_draft(template)
    if draft is None:
        return basis
    # Made from no draft (the page's save before made it), or from an earlier revision.
    later = basis.number is None or (draft.number == basis.number
                                     and draft.revision > basis.revision)
    if not later:
        return basis
    written = runtime.redis().get(_key(template))
    if written is not None and written.decode() == f"{page}:{draft.number}:{draft.revision}":
        return Basis(draft.number, draft.revision)
    return basis


def wrote(template: Template, draft: TemplateVersion, page: str | None) -> None:
    """Remember that ``page`` wrote the draft's current revision."""
    if page and _TOKEN.fullmatch(page):
        runtime.redis().set(_key(template), f"{page}:{draft.number}:{draft.revision}",
                            ex=KEEP_SECONDS)
