"""The settings blueprint, which each page module registers its routes on."""

from __future__ import annotations

from flask import Blueprint

from web.core import errors
from web.settings.pages import PAGES

blueprint = Blueprint("settings", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>/settings")
errors.register(blueprint)


@blueprint.context_processor
def navigation() -> dict:
    """The settings navigation, from the one registry of pages (web/settings/pages.py)."""
    return {"settings_pages": PAGES}
