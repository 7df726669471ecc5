"""The settings blueprint, which each page module registers its routes on."""

from __future__ import annotations

from flask import Blueprint

from web.core import errors

blueprint = Blueprint("settings", __name__, template_folder="templates",
                      url_prefix="/w/<uuid:workspace_id>/settings")
errors.register(blueprint)
