"""`herald apply`, first step: the whole document checked, every problem with its path, before
anything is written."""

from __future__ import annotations

import uuid
from typing import Any

from email_validator import EmailNotValidError, validate_email

from engine.catalog.keys import parse_time
from engine.catalog.parts import all_parts
from engine.catalog.sms_help import MAX_HELP_TEXT
from engine.catalog.topics import MAX_DESCRIPTION, name_problem
from engine.database.models import PLANS
from engine.plugins.manager import default_registry
from engine.provisioning.document import NAME_RULE, ApplyError, valid_name, version_fields


def _settings_or_none() -> Any:
    """The process's settings when bound (a document is also checked without them: then a
    workspace's provider is judged with private destinations refused)."""
    from engine import runtime

    try:
        return runtime.settings()
    except RuntimeError:
        return None


class _Checker:
    """Walks the document once and collects every problem with its path."""

    def __init__(self, production: bool = False) -> None:
        self.problems: list[str] = []
        self.production = production

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, "expected an object")
            return {}
        return value

    def items(self, node: dict[str, Any], key: str, path: str) -> list[Any]:
        value = node.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(f"{path}.{key}", "expected a list")
            return []
        return value

    def name(self, node: dict[str, Any], path: str) -> None:
        if not valid_name(node.get("name")):
            self.fail(f"{path}.name", NAME_RULE)

    def ident(self, node: dict[str, Any], path: str) -> None:
        if node.get("id") is None:
            return
        try:
            uuid.UUID(str(node["id"]))
        except ValueError:
            self.fail(f"{path}.id", "must be a UUID")

    def suppression(self, entry: Any, path: str) -> None:
        """An address (suppressed for all mail), or {address, scope} (docs/delivery.md,
        "Suppression scope")."""
        if not isinstance(entry, dict):
            self.address(entry, path)
            return
        self.address(entry.get("address"), f"{path}.address")
        scope = entry.get("scope", "all")
        if scope not in ("all", "marketing") and not (
                isinstance(scope, str) and scope.startswith("topic:")
                and name_problem(scope.removeprefix("topic:")) is None):
            self.fail(f"{path}.scope", "must be all, marketing or topic:NAME")

    def topics(self, node: dict[str, Any], path: str) -> None:
        """``topics: [{name, description}]`` (docs/delivery.md, "Topics")."""
        seen: set[str] = set()
        for i, topic in enumerate(self.items(node, "topics", path)):
            topic = self.mapping(topic, f"{path}.topics[{i}]")
            if problem := name_problem(topic.get("name")):
                self.fail(f"{path}.topics[{i}].name", problem)
            elif topic["name"] in seen:
                self.fail(f"{path}.topics[{i}].name", "duplicate topic name")
            seen.add(topic.get("name"))
            description = topic.get("description", "")
            if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
                self.fail(f"{path}.topics[{i}].description",
                          f"expected a string of at most {MAX_DESCRIPTION} characters")
            for key in topic:
                if key not in ("name", "description"):
                    self.fail(f"{path}.topics[{i}].{key}", "not a field of a topic")
        help_text = node.get("smsHelpText")
        if help_text is not None and (not isinstance(help_text, str)
                                      or len(help_text) > MAX_HELP_TEXT):
            self.fail(f"{path}.smsHelpText",
                      f"expected a string of at most {MAX_HELP_TEXT} characters, or null")

    def address(self, value: Any, path: str, allow_domain: bool = False) -> None:
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            self.fail(path, "must be a string without line breaks")
            return
        try:
            if allow_domain:
                validate_email("x@" + value, check_deliverability=False)
            else:
                validate_email(value, check_deliverability=False)
        except EmailNotValidError as err:
            self.fail(path, f"not a valid {'domain' if allow_domain else 'address'}: {err}")

    def defaults(self, node: dict[str, Any], path: str) -> None:
        defaults = node.get("defaults")
        if defaults is None:
            return
        defaults = self.mapping(defaults, f"{path}.defaults")
        for key, value in defaults.items():
            if key not in ("to", "cc", "bcc"):
                self.fail(f"{path}.defaults.{key}", "unknown list (to, cc or bcc)")
            elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                self.fail(f"{path}.defaults.{key}", "expected a list of strings")

    def document(self, doc: Any) -> None:
        doc = self.mapping(doc, "$")
        for key in doc:
            if key != "accounts":
                self.fail(f"$.{key}", "unknown key")
        for i, account in enumerate(self.items(doc, "accounts", "$")):
            self.account(self.mapping(account, f"accounts[{i}]"), f"accounts[{i}]")

    def account(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        if node.get("plan", "basic") not in PLANS:
            self.fail(f"{path}.plan", f"must be one of {', '.join(PLANS)}")
        limit = node.get("monthlyLimit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or limit < 0):
            self.fail(f"{path}.monthlyLimit", "must be a whole number >= 0 or null")
        if not isinstance(node.get("webhookDelivery", False), bool):
            self.fail(f"{path}.webhookDelivery", "must be true or false")
        senders = self.mapping(node.get("senders") or {}, f"{path}.senders")
        for i, domain in enumerate(self.items(senders, "domains", f"{path}.senders")):
            self.address(domain, f"{path}.senders.domains[{i}]", allow_domain=True)
        for i, addr in enumerate(self.items(senders, "addresses", f"{path}.senders")):
            self.address(addr, f"{path}.senders.addresses[{i}]")
        for i, ws in enumerate(self.items(node, "workspaces", path)):
            self.workspace(self.mapping(ws, f"{path}.workspaces[{i}]"),
                           f"{path}.workspaces[{i}]")

    def email_provider(self, node: Any, path: str) -> None:
        """One {plugin, url} of a workspace's emailProvider."""
        if not isinstance(node, dict):
            self.fail(path, "expected an object with string members plugin and url")
            return
        provider = node
        if not isinstance(provider.get("plugin"), str) or not isinstance(
            provider.get("url"), str
        ):
            self.fail(path, "needs string members plugin and url")
            return
        # The check HERALD_EMAIL_PROVIDER gets at start-up: else every send fails on it.
        from config.settings import provider_scheme_of
        from engine.webhooks.provider_hosts import own_provider_problem

        if self.production and "inbox" in (provider["plugin"].strip().lower(),
                                           provider_scheme_of(provider["url"])):
            # As the setting: the dev inbox keeps mail in a table nobody reads in production.
            self.fail(path, "inbox:// is for development and test only")
        elif problem := own_provider_problem(provider["url"], provider["plugin"],
                                             _settings_or_none()):
            self.fail(path, problem)

    def callbacks(self, node: dict[str, Any], path: str) -> None:
        """``callbackUrl`` (a string or null) checked as the Callbacks page checks it: the
        webhook destination rules (spec 6.1), the rule broken named (docs/callbacks.md)."""
        from engine.callbacks.targets import CallbackUrlError, check_url

        url = node.get("callbackUrl")
        if url is not None:
            if not isinstance(url, str):
                self.fail(f"{path}.callbackUrl", "expected a string or null")
            else:
                try:
                    check_url(url)
                except CallbackUrlError as err:
                    self.fail(f"{path}.callbackUrl", str(err))
        if not isinstance(node.get("callbackTracking", True), bool):
            self.fail(f"{path}.callbackTracking", "expected true or false")

    def retention(self, node: dict[str, Any], path: str) -> None:
        """``retentionDays``: 1 to 3650, or null to keep forever (docs/apply.md)."""
        from engine.retention.policy import RetentionError, parse_days

        days = node.get("retentionDays")
        if days is None:
            return
        try:
            if not isinstance(days, int) or isinstance(days, bool):
                raise RetentionError("expected a whole number of days from 1 to 3650, or null")
            parse_days(days)
        except RetentionError as err:
            self.fail(f"{path}.retentionDays", str(err))

    def workspace(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        provider = node.get("emailProvider")
        if isinstance(provider, list):  # an ordered list: failover (docs/delivery.md)
            if not provider:
                self.fail(f"{path}.emailProvider", "an empty list: give at least one "
                                                   "provider, or null")
            for i, item in enumerate(provider):
                self.email_provider(item, f"{path}.emailProvider[{i}]")
        elif provider is not None:
            self.email_provider(provider, f"{path}.emailProvider")
        self.callbacks(node, path)
        self.retention(node, path)
        self.topics(node, path)
        for i, entry in enumerate(self.items(node, "suppressions", path)):
            self.suppression(entry, f"{path}.suppressions[{i}]")
        names: set[str] = set()
        for i, key in enumerate(self.items(node, "apiKeys", path)):
            key = self.mapping(key, f"{path}.apiKeys[{i}]")
            self.name(key, f"{path}.apiKeys[{i}]")
            if key.get("name") in names:
                self.fail(f"{path}.apiKeys[{i}].name", "duplicate key name")
            names.add(key.get("name"))
            if key.get("status", "active") not in ("active", "revoked"):
                self.fail(f"{path}.apiKeys[{i}].status", "must be active or revoked")
            if key.get("expiresAt") is not None:
                try:
                    parse_time(str(key["expiresAt"]))
                except ValueError:
                    self.fail(f"{path}.apiKeys[{i}].expiresAt", "must be an RFC 3339 time")
        for i, project in enumerate(self.items(node, "projects", path)):
            self.folder(self.mapping(project, f"{path}.projects[{i}]"),
                        f"{path}.projects[{i}]")
        seen: set[str] = set()
        for i, partial in enumerate(self.items(node, "partials", path)):
            self.partial(self.mapping(partial, f"{path}.partials[{i}]"),
                         f"{path}.partials[{i}]", seen)

    def partial(self, node: dict[str, Any], path: str, seen: set[str]) -> None:
        """{name, versions: [{status, body}]} (docs/apply.md, "Partials")."""
        from engine.catalog.partials import NAME
        from engine.catalog.partials import NAME_RULE as PARTIAL_NAME_RULE
        from engine.rendering import TemplateSyntaxError, check_template

        for key in node:
            if key not in ("name", "versions"):
                self.fail(f"{path}.{key}", "unknown key (name, versions)")
        name = node.get("name")
        if not isinstance(name, str) or not NAME.fullmatch(name):
            self.fail(f"{path}.name", PARTIAL_NAME_RULE)
        elif name.lower() in seen:
            self.fail(f"{path}.name", f"a second partial named {name!r}")
        else:
            seen.add(name.lower())
        for i, version in enumerate(self.items(node, "versions", path)):
            where = f"{path}.versions[{i}]"
            version = self.mapping(version, where)
            for key in version:
                if key not in ("status", "body"):
                    self.fail(f"{where}.{key}", "not a field of a partial version "
                                                "(status, body)")
            if version.get("status", "draft") not in ("published", "draft"):
                self.fail(f"{where}.status", "must be published or draft")
            body = version.get("body", "")
            if not isinstance(body, str):
                self.fail(f"{where}.body", "expected a string")
                continue
            try:
                check_template(body)
            except TemplateSyntaxError as err:
                self.fail(f"{where}.body", f"invalid template: {err}")

    def folder(self, node: dict[str, Any], path: str) -> None:
        self.name(node, path)
        self.defaults(node, path)
        for i, child in enumerate(self.items(node, "containers", path)):
            self.folder(self.mapping(child, f"{path}.containers[{i}]"),
                        f"{path}.containers[{i}]")
        for i, template in enumerate(self.items(node, "templates", path)):
            self.template(self.mapping(template, f"{path}.templates[{i}]"),
                          f"{path}.templates[{i}]")

    def template(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        self.defaults(node, path)
        channel = node.get("channel")
        channels = default_registry().channels
        if not isinstance(channel, str) or channel not in channels:
            self.fail(f"{path}.channel", f"must be one of {', '.join(sorted(channels))}")
            return
        first_live: int | None = None
        for i, version in enumerate(self.items(node, "versions", path)):
            version = self.mapping(version, f"{path}.versions[{i}]")
            self.version(channel, version, f"{path}.versions[{i}]")
            if version.get("live") is True:
                if first_live is None:
                    first_live = i
                else:
                    self.fail(f"{path}.versions[{i}].live", "a template has one live version "
                              f"(versions[{first_live}] is marked live already)")

    def version(self, channel: str, node: dict[str, Any], path: str) -> None:
        from engine.rendering import TemplateSyntaxError, check_template

        allowed = {*version_fields(channel), "status", "locked", "live", "variants",
                   "inlineCss"}
        for key in node:
            if key not in allowed:
                self.fail(f"{path}.{key}", f"not a field of a {channel} version")
        if node.get("status", "draft") not in ("published", "draft"):
            self.fail(f"{path}.status", "must be published or draft")
        if "live" in node:
            # Only the one live version is marked; `live: false` would read as a promise
            # that the last published version is not live, which apply cannot keep.
            if node["live"] is not True:
                self.fail(f"{path}.live", "must be true (leave it out on the other versions)")
            elif node.get("status") != "published":
                self.fail(f"{path}.live", "only a published version can be live")
        for field, problem in default_registry().channel(channel).check_content(node):
            self.fail(f"{path}.{field}", problem)
        if not isinstance(node.get("inlineCss", False), bool):
            self.fail(f"{path}.inlineCss", "must be true or false")
        self.variants(channel, node, path)
        # Every part is scanned, so a version with several faults reports them all at once.
        for part, text in all_parts(channel, node).items():
            try:
                check_template(text)
            except TemplateSyntaxError as err:
                self.fail(f"{path}.{part}", f"invalid template: {err}")


    def variants(self, channel: str, node: dict[str, Any], path: str) -> None:
        """``variants: [{locale, <template part>: text, ...}]`` (docs/rendering.md)."""
        from engine.catalog.variants import TAG_RULE, valid_tag

        parts = [part for part, _ in default_registry().channel(channel).template_parts(node)]
        seen: set[str] = set()
        for i, variant in enumerate(self.items(node, "variants", path)):
            where = f"{path}.variants[{i}]"
            variant = self.mapping(variant, where)
            locale = variant.get("locale")
            if not valid_tag(locale):
                self.fail(f"{where}.locale", TAG_RULE)
            elif locale.lower() in seen:
                self.fail(f"{where}.locale", f"a second variant for {locale}")
            else:
                seen.add(locale.lower())
            for key, value in variant.items():
                if key == "locale":
                    continue
                if key not in parts:
                    self.fail(f"{where}.{key}", f"not a template part of a {channel} version "
                                                   f"({', '.join(parts)})")
                elif value is not None and not isinstance(value, str):
                    self.fail(f"{where}.{key}", "expected a string or null")


def document_problems(doc: Any, production: bool = False) -> list[str]:
    """Every problem in the document, each with its path."""
    checker = _Checker(production)
    checker.document(doc)
    return checker.problems


def check_document(doc: Any, production: bool = False) -> None:
    """Raise ApplyError listing every problem in the document."""
    if problems := document_problems(doc, production):
        raise ApplyError(problems)
