"""The tables the first migration step makes (engine/database/migrations.py): the package's
own models and the dev inbox's and the lists' tables, as they were then. Every later table
is made by the step that brought it."""

from __future__ import annotations

from engine.database.models import (
    Account,
    ApiKey,
    BaseModel,
    Container,
    DeliveryAttempt,
    Notification,
    Project,
    SchemaVersion,
    Sender,
    Suppression,
    Template,
    TemplateSample,
    TemplateVersion,
    TrackingEvent,
    Workspace,
)
from engine.database.models.inbox import CaughtWebhook, InboxMessage
from engine.database.models.lists import RecipientList

ALL_MODELS: tuple[type[BaseModel], ...] = (
    Account,
    Sender,
    Workspace,
    Project,
    Container,
    Template,
    TemplateVersion,
    TemplateSample,
    ApiKey,
    Suppression,
    Notification,
    DeliveryAttempt,
    TrackingEvent,
    InboxMessage,
    CaughtWebhook,
    RecipientList,
    SchemaVersion,
)
