"""``Send one message`` (a template's page): one recipient and its tags typed in a form, sent
as an API client's request for the live version would be, through the send's one accept
path (engine/sending/accepting.py): the same rules, rendering, row, queue and worker, one
unit of the monthly allowance, and counted in Reports. It is a list of one row typed by
hand, so it shares a list row's request (engine/lists/rows.py) and recipient rules."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from engine.catalog import snapshots
from engine.database.models import Template, TemplateVersion, Workspace
from engine.errors import ApiError
from engine.lists.checking import normalise_recipient
from engine.lists.rows import RowRequest, recipient_column
from engine.plugins.manager import default_registry
from engine.rendering import variable_metadata
from engine.sending import allowance
from engine.sending.accepting import accept, rendered_payload

MAX_TAG_CHARS = 10_000  # a typed value; the API's own limits apply after this


@dataclass
class Refused(Exception):
    """Nothing was sent; ``fields`` says why per form field (``recipient``, a tag's name,
    or ``""`` for the whole form)."""

    fields: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return "; ".join(self.fields.values())


def tag_names(version: TemplateVersion | None, channel: str) -> list[str]:
    """The tags the version's text uses, in the order they first appear."""
    if version is None:
        return []
    fields = default_registry().channel(channel).content_fields
    texts = [v for k, v in (version.content or {}).items() if k in fields and isinstance(v, str)]
    try:
        return list(variable_metadata(texts, {})["missingVariables"])
    except Exception:  # a stored text that no longer parses sends nothing anyway
        return []


def live_version(workspace: Workspace, template: Template) -> TemplateVersion | None:
    snap = snapshots.snapshot(str(workspace.id), str(template.id))
    return snap.live if snap is not None else None


def send_one(workspace: Workspace, template: Template, recipient: str,
             tags: dict[str, str]) -> uuid.UUID:
    """Accept one notification of the template's live version to ``recipient`` alone (the
    template's default recipients are not added); its id. Raises Refused."""
    if recipient_column(template.channel) is None:
        raise Refused({"": "Only a template of a channel sent to lists (email, SMS) sends "
                           "one message from here."})
    snap = snapshots.snapshot(str(workspace.id), str(template.id))
    version = snap.live if snap is not None else None
    if version is None:
        raise Refused({"": "Publish the template first: a message sends its live version."})
    recipient = normalise_recipient(template.channel, recipient or "")
    if not recipient:
        raise Refused({"recipient": f"Enter the recipient's {_kind(template.channel)}."})
    long = [name for name, value in tags.items() if len(value) > MAX_TAG_CHARS]
    if long:
        raise Refused({name: f"{name}: at most {MAX_TAG_CHARS:,} characters." for name in long})
    row = RowRequest(str(workspace.id), str(template.id), version.number, template.channel,
                     recipient, tags)
    account = workspace.account
    limited = account.monthly_limit is not None
    if limited and not allowance.take(str(account.id), account.monthly_limit, 1):
        raise Refused({"": "The account's monthly allowance is used up: nothing was sent."})
    try:
        row.check()  # typed by hand: the API's field rules, as a list's check runs them
        found = row.resolved(snap, version)
        return accept(found, rendered_payload(found), f"one-{uuid.uuid4().hex}")
    except ApiError as err:
        if limited:
            allowance.give_back(str(account.id), 1)
        raise Refused(_fields(err, template.channel)) from None
    except BaseException:
        if limited:
            allowance.give_back(str(account.id), 1)
        raise


def _kind(channel: str) -> str:
    """The recipient as the form asks for it: its channel's list column, and a phone
    number's form."""
    declared = default_registry().channel(channel)
    kind = declared.list_column or "recipient"
    return f"{kind} (E.164, such as +447911123456)" if declared.recipient_kind == "phone" else kind


def _fields(err: ApiError, channel: str) -> dict[str, str]:
    """The API's refusal by form field: a recipient's rule on ``recipient``, the rest
    (a sender, a render error) on the form."""
    out: dict[str, str] = {}
    for name, messages in (err.errors or {}).items():
        text = "; ".join(messages)
        if "overrideRecipients" in name:
            out["recipient"] = f"Enter a valid {_kind(channel)}: {text}."
        else:
            out[""] = (out[""] + "; " if "" in out else "") + f"{name}: {text}"
    return out or {"": err.detail or "The message could not be sent."}
