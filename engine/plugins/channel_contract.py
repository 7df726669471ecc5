"""The channel contract: what a channel declares and the engine calls, for every channel, the
built-in ones included (docs/plugins.md, "The channel contract").

The engine owns tenancy, the recipients' defaults, suppression, tracking, retries and the
records; a channel says which parts of a version are template text and in which language,
which content fields a version has, what its request options may hold, the rules a send
must pass, the payload stored with the notification, how a delivery is planned into
messages, and how one message is built. The engine's side of each step is an object passed
in (``SendRequest``, ``PlannedDelivery``), so a channel needs nothing else of Herald's.

A channel also declares what the rest of the house shows and asks of it (its label, its
recipients' form, the options a snippet, a preview and a test send use): the web
application and the editor's services read these and keep no table of channels, so a
channel a plugin brings looks like a built-in one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

# A message still to send: its recipient (one address of a fan-out, else None) and what
# makes its payload, called when the send lanes ask for it (engine/delivery/message_lanes.py).
Planned = tuple[str | None, Callable[[], dict[str, Any]]]


@dataclass(frozen=True)
class EditorField:
    """One field of a channel's version in the template editor, as the editor draws it.

    ``widget``: ``"code"`` (template text in the code editor, in ``language``), ``"text"``,
    ``"checkbox"``, ``"select"`` (one of ``choices``), ``"sender"`` (a text field whose hint
    lists the account's verified senders) or ``"topic"`` (a select of the workspace's
    topics). ``translated``: a template part that each language variant has its own text
    of. ``group``: a legend that gathers consecutive checkboxes.
    """

    name: str
    label: str = ""  # empty: the editor's own name for the field (the key itself, else)
    widget: str = "text"
    hint: str = ""
    language: str = "text"
    rows: int = 10
    translated: bool = False
    choices: tuple[str, ...] = ()
    group: str = ""


@dataclass
class Recipients:
    """The recipients of a send after D4 (docs/api.md): defaults, override, additions."""

    to: list[str]
    cc: list[str]
    bcc: list[str]
    was_overridden: bool

    def all(self) -> list[str]:
        return [*self.to, *self.cc, *self.bcc]


@dataclass
class SendRequest:
    """A send or preview that passed validation and tenancy, as its channel sees it.

    ``options`` is the request's member named by the channel's ``options_field`` ({} when
    absent); ``content`` the version's content. The callables are the engine's policy.
    """

    options: dict[str, Any]
    content: dict[str, Any]
    defaults: dict[str, list[str]]       # the template's inherited default recipients
    preview: bool
    own_provider: bool                    # the workspace brings its own email provider (D9)
    webhook_delivery: bool                # the account's plan includes webhook delivery
    recipients: Callable[[], Recipients]  # D4 over the defaults and these options
    sender_verified: Callable[[str], bool]
    check_destination: Callable[[str], None]  # spec 6.1; raises the ApiError itself
    rendering_failed: Callable[[str, str], Exception]  # (part, message) -> the ApiError
    warnings: list[dict[str, str]] = field(default_factory=list)

    def warn(self, field_path: str, message: str) -> None:
        """A preview's validationErrors entry: what a send would refuse."""
        self.warnings.append({"field": field_path, "message": message})


@dataclass
class Plan:
    """The messages still to send and what was decided without sending."""

    messages: list[Planned] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    reached_before: bool = False  # an earlier attempt delivered to some (a fan-out)


@dataclass
class PlannedDelivery:
    """One delivery attempt of a notification, as its channel plans it."""

    notification_id: str
    attempt: int                                   # 1 for the first
    payload: dict[str, Any]
    suppressed: Callable[[list[str]], set[str]]    # of these suppression keys, the suppressed
    settled: Callable[[], dict[str, str]]          # a fan-out's recipients settled before
    tracked_html: Callable[[dict[str, Any], str | None], str | None]  # (payload, recipient)
    unsubscribe_url: Callable[[str], str]          # the recipient's one-click link


class Channel(Protocol):
    """What a channel plugin registers with ``register(name, channel)``."""

    name: str
    options_field: str | None          # the request member with its options ("emailOptions")
    content_fields: tuple[str, ...]    # a version's fields in `herald apply` and export
    content_defaults: Mapping[str, Any]
    delivery: str                      # "messages"; "webhook": the engine's signed POST sends
    needs_provider: bool               # False: the channel's own ``send`` delivers
    provider_setting: str | None       # the HERALD_* variable naming its provider
    own_provider: bool                 # a workspace's emailProvider serves it
    previewable: bool                  # POST /notifications/preview renders it
    # What people see and pick (the editor, the template list, the snippets, test sends):
    label: str                         # its name for people ("Email")
    menu_position: int                 # its place where channels are listed (lowest first)
    recipient_kind: str                # "email", "phone", "url" or "text": the input to ask
    recipient_hint: str                # a test send's recipient, described ("an email address")
    recipient_example: str             # one such recipient ("you@example.com")
    default_recipient_lists: tuple[tuple[str, str], ...]  # (key, label) a template keeps
    recipients_note: str               # said where a template of it keeps no default lists
    editor_fields: tuple[EditorField, ...]  # the editor's fields of a version, in order
    inlines_css: bool                  # a version keeps `inlineCss` (a new one: true)
    # What the engine asks beside a send (queues, lists, senders):
    bulk_when: tuple[str, str] | None  # (payload field, value): the bulk queue, Marketing
    list_column: str | None            # a recipients file's column; None: no list sends
    sender_field: str | None           # the version field a verified sender covers

    def normalise_recipient(self, value: str) -> str: ...

    def list_options(self, recipient: str) -> dict[str, Any]: ...

    def preview_note(self, text: str) -> str | None: ...

    def valid_recipient(self, recipient: str) -> bool: ...

    def example_options(self, has_default_recipients: bool) -> dict[str, Any]: ...

    def preview_options(self) -> dict[str, Any]: ...

    def test_options(self, recipient: str) -> dict[str, Any]: ...

    def mark_test(self, payload: dict[str, Any]) -> dict[str, Any]: ...

    def template_parts(self, content: Mapping[str, Any]) -> Sequence[tuple[str, str]]: ...

    def check_content(self, content: Mapping[str, Any]) -> list[tuple[str, str]]: ...

    def validate_options(self, options: object, errors: Any) -> None: ...

    def admit(self, request: SendRequest) -> None: ...

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]: ...

    def plan(self, delivery: PlannedDelivery) -> Plan: ...

    def build(self, payload: dict[str, Any]) -> Any: ...

    def send(self, message: Any) -> Any: ...   # needs_provider false: the channel sends


def goes_bulk(channel: Channel, payload: Any) -> bool:
    """Whether a notification of ``channel`` with ``payload`` goes to the bulk queue (and
    counts as Marketing for suppressions): the channel's ``bulk_when`` field holds its
    value."""
    when = getattr(channel, "bulk_when", None)
    return (when is not None and isinstance(payload, Mapping)
            and payload.get(when[0]) == when[1])


class BaseChannel:
    """Defaults for a channel: a required ``body`` in plain text, no request options, one
    message a delivery through the provider its setting names. A channel overrides what
    differs (channels/sms/ is the shortest built-in example)."""

    name = ""
    options_field: str | None = None
    content_fields: tuple[str, ...] = ("body",)
    content_defaults: Mapping[str, Any] = {}
    delivery = "messages"
    needs_provider = True
    provider_setting: str | None = None
    own_provider = False
    previewable = False
    menu_position = 100
    recipient_kind = "text"
    recipient_hint = "a recipient"
    recipient_example = ""
    default_recipient_lists: tuple[tuple[str, str], ...] = ()
    recipients_note = "This channel's recipients come with each send (its request options)."
    inlines_css = False
    bulk_when: tuple[str, str] | None = None
    list_column: str | None = None
    sender_field: str | None = None

    @property
    def editor_fields(self) -> tuple[EditorField, ...]:
        """Each content field as the editor draws it unless the channel says otherwise: a
        template part in the code editor (and in each language), a field whose default is
        true or false a checkbox, any other a text field."""
        parts = dict(self.template_parts(dict(self.content_defaults)))
        return tuple(
            EditorField(name, widget="code", language=parts[name], translated=True)
            if name in parts
            else EditorField(name, widget="checkbox")
            if isinstance(self.content_defaults.get(name), bool)
            else EditorField(name)
            for name in self.content_fields)

    def normalise_recipient(self, value: str) -> str:
        """A recipients file's cell (or a typed recipient) as the API is given it."""
        return value.strip()

    def list_options(self, recipient: str) -> dict[str, Any]:
        """The request options that send a list's row to ``recipient`` alone (the
        template's default recipients left out)."""
        return {"overrideRecipients": [recipient]}

    def preview_note(self, text: str) -> str | None:
        """A line the editor's preview shows under the rendered text (None: none)."""
        return None

    @property
    def label(self) -> str:
        """Its name for people; the channel's name unless it says otherwise."""
        return self.name

    def valid_recipient(self, recipient: str) -> bool:
        """Whether ``recipient`` has the form a test send needs (its rules at send are
        ``admit``'s)."""
        return True

    def example_options(self, has_default_recipients: bool) -> dict[str, Any]:
        """The request options a ready-made snippet sends with ({}: none): what only the
        integrator knows, such as a recipient when the template names none."""
        return {}

    def preview_options(self) -> dict[str, Any]:
        """The request options the editor's preview renders with ({}: none)."""
        return {}

    def test_options(self, recipient: str) -> dict[str, Any]:
        """The request options of a test send to ``recipient`` alone."""
        return {"overrideRecipients": [recipient]}

    def mark_test(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload of a test send, marked as a test where its message can say so."""
        return payload

    def template_parts(self, content: Mapping[str, Any]) -> Sequence[tuple[str, str]]:
        """Each part that is template text, with the language its ``{{x}}`` escapes for."""
        return (("body", "text"),)

    def check_content(self, content: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Problems of a version's content in `herald apply`: (field, message)."""
        return [] if isinstance(content.get("body"), str) else [("body", "is required")]

    def validate_options(self, options: object, errors: Any) -> None:
        """Add to ``errors`` (a FieldErrors) every rule the request's options break."""

    def admit(self, request: SendRequest) -> None:
        """The channel's rules at send (D1's (docs/api.md) channel rules): raise the ApiError."""

    def payload(self, request: SendRequest,
                rendered: Mapping[str, str | None]) -> dict[str, Any]:
        raise NotImplementedError

    def plan(self, delivery: PlannedDelivery) -> Plan:
        """One message, the payload as it was stored."""
        payload = delivery.payload
        return Plan(messages=[(None, lambda: payload)])

    def build(self, payload: dict[str, Any]) -> Any:
        return payload

    def send(self, message: Any) -> Any:
        """Send one built message and return its SendResult (raise a DeliveryError): only
        for a channel that needs no provider (``needs_provider`` false), which the engine
        then uses as its own provider."""
        raise NotImplementedError(f"channel {self.name!r} has a provider: it sends nothing")
