"""Column types shared by the models: JSON as text (portable) and encrypted text."""

from __future__ import annotations

import json
from typing import Any

from peewee import TextField

from engine.database import secrets
from engine.formats import json_text


class JSONField(TextField):
    """JSON stored as text so SQLite and PostgreSQL behave alike."""

    def db_value(self, value: Any) -> str | None:
        if value is None:
            return None
        # One C encoder made once (json.dumps builds one at every call, a tenth of a send's
        # payload encoding): the columns hold trees, never a value that refers to itself.
        return json_text.compact(value)

    def python_value(self, value: str | None) -> Any:
        return None if value is None else json.loads(value)


class EncryptedField(TextField):
    """Text encrypted at rest with the key derived from HERALD_SECRET_KEY."""

    def db_value(self, value: str | None) -> str | None:
        return None if value is None else secrets.encrypt(value)

    def python_value(self, value: str | None) -> str | None:
        return None if value is None else secrets.decrypt(value)
