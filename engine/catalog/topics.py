"""A workspace's topics: the kinds of Marketing email it sends (``news``, ``product``), each
a checkbox on the preferences page its recipients reach from an unsubscribe link, and the
suppression scope ``topic:NAME`` of an address that left one (docs/delivery.md, "Topics").

Removing a topic leaves its suppressions and the versions that name it as they are: a
send of such a version still honours the addresses that left the topic.
"""

from __future__ import annotations

from typing import Any

from peewee import IntegrityError

from engine.catalog.suppressions import TOPIC_NAME
from engine.database.db import database
from engine.database.models.recipients import Topic

MAX_DESCRIPTION = 500
MAX_TOPICS = 100  # a preferences page of more checkboxes than this helps no one


class TopicError(ValueError):
    """A topic that cannot be added; ``field`` names the input at fault."""

    def __init__(self, message: str, field: str = "name") -> None:
        super().__init__(message)
        self.message, self.field = message, field


def name_problem(name: object) -> str | None:
    """What is wrong with a topic's name, or None."""
    if not isinstance(name, str) or not TOPIC_NAME.fullmatch(name):
        return ("A topic's name is 1 to 60 letters, digits, hyphens or underscores, "
                "starting with a letter or digit.")
    return None


def every(workspace_id: Any) -> list[Topic]:
    return list(Topic.select().where(Topic.workspace == workspace_id).order_by(Topic.name))


def names(workspace_id: Any) -> list[str]:
    return [t.name for t in every(workspace_id)]


def find(workspace_id: Any, topic_id: Any) -> Topic | None:
    """One of the workspace's topics (another workspace's is as absent as an unknown one)."""
    return Topic.get_or_none(Topic.id == topic_id, Topic.workspace == workspace_id)


def add(workspace_id: Any, name: str, description: str = "") -> Topic:
    """A new topic, or TopicError (a bad or taken name, too long a description)."""
    name = (name or "").strip()
    description = (description or "").strip()
    if problem := name_problem(name):
        raise TopicError(problem)
    if len(description) > MAX_DESCRIPTION:
        raise TopicError(f"At most {MAX_DESCRIPTION} characters.", "description")
    if Topic.select().where(Topic.workspace == workspace_id).count() >= MAX_TOPICS:
        raise TopicError(f"A workspace has at most {MAX_TOPICS} topics.")
    try:
        with database.atomic():
            return Topic.create(workspace=workspace_id, name=name, description=description)
    except IntegrityError:
        raise TopicError(f"There is already a topic named {name}.") from None


def put(workspace_id: Any, name: str, description: str) -> str | None:
    """Create the topic or set its description (``herald apply``): "created", "updated",
    or None when it was so already."""
    row = Topic.get_or_none(Topic.workspace == workspace_id, Topic.name == name)
    if row is None:
        add(workspace_id, name, description)
        return "created"
    if row.description != (description or "").strip():
        Topic.update(description=(description or "").strip()).where(Topic.id == row.id).execute()
        return "updated"
    return None


def remove(workspace_id: Any, topic_id: Any) -> bool:
    return bool(Topic.delete().where(Topic.id == topic_id,
                                     Topic.workspace == workspace_id).execute())
