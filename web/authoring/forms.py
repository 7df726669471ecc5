"""The authoring pages' plain forms (create, rename, move, default recipients, a
confirmation), read through WTForms as the settings forms are; the rules behind them live
in the engine (engine/authoring/hierarchy.py). The editor's own fields, which its htmx
requests post as JSON, are its channel's content fields (loading.posted).

The app-wide CSRF protection (web/security.py) checks every POST before a view runs, so
these forms only read their fields.
"""

from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import StringField, TextAreaField


class _Fields(FlaskForm):
    class Meta:
        csrf = False  # checked for every POST already

    def posted(self) -> dict[str, str]:
        """The fields the request posted, as posted (to show the form again with them)."""
        return {name: field.data for name, field in self._fields.items()
                if field.raw_data}


class NewItemForm(_Fields):
    kind = StringField(default="")
    name = StringField(default="")
    channel = StringField(default="")
    location = StringField(default=None)


class RenameForm(_Fields):
    name = StringField(default="")


class MoveForm(_Fields):
    location = StringField(default=None)


class DefaultsForm(_Fields):
    to = TextAreaField(default="")
    cc = TextAreaField(default="")
    bcc = TextAreaField(default="")


class ConfirmForm(_Fields):
    confirm = StringField(default="")

    @property
    def confirmed(self) -> bool:
        return self.confirm.data == "yes"
