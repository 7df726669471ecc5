"""No channel is named outside channels/ and plugins/: the engine, the web pages, the API and
the commands ask the channel contract (docs/plugins.md), so a channel a plugin brings is
served everywhere a built-in one is.

Every quoted channel name in engine/, web/, api/, cli/ and config/ fails the test unless it
is listed below with why it is not a channel's name (a person's email address, an MFA
method) or must stay (the spec's own response shape, the demo's document). A listed file's
line that also mentions a channel is never let through by the file's reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.plugins.manager import build_registry, make_plugin_manager

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "web", "api", "cli", "config")
SUFFIXES = (".py", ".html", ".js", ".css")

# Files where the word means something else: each occurrence is allowed unless its line
# also speaks of a channel.
OTHER_MEANING = {
    "engine/people/users.py": "a person's email address (the form field)",
    "engine/people/resets.py": "a person's email address (the form field)",
    "engine/people/invitations.py": "a person's email address (the form field)",
    "engine/people/sso_accounts.py": "an identity provider's `email` claim",
    "cli/users.py": "a person's email address (the argument and its JSON member)",
    "cli/dev.py": "the demo owner's email address (a JSON member)",
    "web/settings/members.py": "a person's email address (the form field)",
    "web/settings/csv_files.py": "the header of a suppression file's address column",
    "web/auth/single_sign_on.py": "an OpenID `amr` value (SMS one-time code), not a channel",
}
# Lines that name a channel's value on purpose, each with why it must stay.
KEPT_LINES = [
    ("api/previews.py", r'return \{"email": \{',
     "spec 4.2's PreviewResponse: its member is named `email`"),
    ("api/previews.py", r"""'\{"email": ', dumps""",
     "spec 4.2's PreviewResponse, written in sections: its member is named `email`"),
    ("api/previews.py", r'"notificationType": "email"',
     "spec 4.2's PreviewResponse.templateMetadata.notificationType"),
    ("api/examples.py", r'"email": \{', "the OpenAPI example of spec 4.2's PreviewResponse"),
    ("api/examples.py", r'"notificationType": "email"',
     "the OpenAPI example of spec 4.2's PreviewResponse"),
    ("engine/provisioning/demo.py", r'"channel": "(email|sms|webhook)"',
     "the demo workspace's apply document: data, one template of each built-in channel"),
    ("engine/delivery/providers.py", r'channel\.delivery == "webhook"',
     "the contract's `delivery` kind (the engine's signed POST), not a channel's name"),
    ("engine/delivery/retry.py", r'channel\.delivery == "webhook"',
     "the contract's `delivery` kind (the engine's signed POST), not a channel's name"),
    ("engine/delivery/webhook_sending.py", r'``delivery = "webhook"``',
     "the contract's `delivery` kind, in a docstring"),
    ("engine/observability/deliveries.py", r'``delivery`` is ``"webhook"``',
     "the contract's `delivery` kind, in a docstring"),
    ("engine/plugins/channel_contract.py", r'delivery: str .*"webhook"',
     "the contract's `delivery` kinds, documented"),
    ("engine/plugins/channel_contract.py", r'recipient_kind: str .*"email", "phone"',
     "the contract's `recipient_kind` values, documented"),
    ("web/authoring/templates/authoring/editor.html",
     r"\{'email': 'email', 'phone': 'tel', 'url': 'url'\}\.get\(channel\.recipient_kind",
     "a `recipient_kind` (the contract's vocabulary) to its input mode"),
    ("web/authoring/templates/authoring/one_message.html",
     r"\{'email': 'email', 'phone': 'tel', 'url': 'url'\}\.get\(channel\.recipient_kind",
     "a `recipient_kind` (the contract's vocabulary) to its input type"),
]


def channel_names() -> set[str]:
    """The built-in channels' names, as their entry points register them, and the example
    plugin's."""
    return set(build_registry(make_plugin_manager()).channels) | {"chat"}


def quoted(names: set[str]) -> re.Pattern[str]:
    alternatives = "|".join(sorted(re.escape(n) for n in names))
    return re.compile(rf"""(["'])({alternatives})\1""")


def hits(names: set[str], root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(path, line number, line) of each quoted channel name the lists do not let through."""
    pattern = quoted(names)
    kept = [(path, re.compile(rule)) for path, rule, _ in KEPT_LINES]
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, 1):
                if not pattern.search(line):
                    continue
                if any(rel == p and rule.search(line) for p, rule in kept):
                    continue
                if rel in OTHER_MEANING and "channel" not in line.lower():
                    continue
                found.append((rel, number, line.strip()))
    return found


def test_the_built_in_channels_are_what_the_test_looks_for():
    assert {"email", "sms", "webhook"} <= channel_names()


def test_no_channel_is_named_outside_channels_and_plugins():
    found = hits(channel_names())
    assert not found, "a channel named outside channels/ and plugins/ (ask its contract):\n" + \
        "\n".join(f"{path}:{number}: {line}" for path, number, line in found)


def test_every_allowance_is_still_needed():
    """An allowance that matches nothing any more is removed, not kept as a blind spot."""
    pattern = quoted(channel_names())
    for path, rule, why in KEPT_LINES:
        text = (ROOT / path).read_text(encoding="utf-8")
        assert any(re.search(rule, line) and pattern.search(line)
                   for line in text.splitlines()), (path, rule, why)
    for path, why in OTHER_MEANING.items():
        assert pattern.search((ROOT / path).read_text(encoding="utf-8")), (path, why)


def test_the_check_finds_a_channel_named_in_the_engine_or_a_page(tmp_path):
    """The check itself: a comparison with a channel's name, such as the engine and the
    pages once made, is found, even in a file allowed the word for another meaning."""
    (tmp_path / "engine" / "people").mkdir(parents=True)
    (tmp_path / "web").mkdir()
    (tmp_path / "engine" / "lists.py").write_text(
        'RECIPIENT_COLUMNS = {"sms": "phone number"}\n', encoding="utf-8")
    (tmp_path / "engine" / "people" / "users.py").write_text(
        'field = "email"\nmail = registry.channel("email")\n', encoding="utf-8")
    (tmp_path / "web" / "editor.html").write_text(
        "{% if template.channel == 'webhook' %}\n", encoding="utf-8")
    assert sorted(hits(channel_names(), tmp_path)) == [
        ("engine/lists.py", 1, 'RECIPIENT_COLUMNS = {"sms": "phone number"}'),
        ("engine/people/users.py", 2, 'mail = registry.channel("email")'),
        ("web/editor.html", 1, "{% if template.channel == 'webhook' %}")]
