"""Credentials in an `apply` file as `${NAME}` references to the environment.

`herald export` never prints a provider URL's credential: the password (or a lone user part,
which is a token for vendors such as Postmark) and any secret query parameter become a
`${SCHEME_PASSWORD}`-style reference, and `herald apply` puts the variable's value back. A
file may carry references by hand as well, so that no credential is kept in it at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote, urlsplit

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Query parameters that carry a credential (the log mask's list: config/redaction.py).
SECRET_PARAMETERS = frozenset({"password", "passwd", "pwd", "secret", "token", "api_key",
                               "apikey"})


def provider_entries(workspace: Mapping[str, Any], path: str) -> Iterator[tuple[dict, str]]:
    """Each {plugin, url} of a workspace's emailProvider (an object or a list), with its
    path; anything malformed is left to the checker."""
    provider = workspace.get("emailProvider")
    if isinstance(provider, dict):
        yield provider, f"{path}.emailProvider"
    elif isinstance(provider, list):
        for i, item in enumerate(provider):
            if isinstance(item, dict):
                yield item, f"{path}.emailProvider[{i}]"


def workspaces(doc: Any) -> Iterator[tuple[dict, str]]:
    """Every workspace object of a document, with its path."""
    accounts = doc.get("accounts") if isinstance(doc, dict) else None
    for i, account in enumerate(accounts if isinstance(accounts, list) else []):
        found = account.get("workspaces") if isinstance(account, dict) else None
        for j, ws in enumerate(found if isinstance(found, list) else []):
            if isinstance(ws, dict):
                yield ws, f"accounts[{i}].workspaces[{j}]"


@dataclass
class Resolution:
    """What resolving a document's references found: problems, and the values put in (so
    that no problem message quotes one)."""

    problems: list[str] = field(default_factory=list)
    # The values put into each provider entry, by the entry's path.
    values: dict[str, dict[str, str]] = field(default_factory=dict)

    def hide(self, text: str) -> str:
        """``text`` (a problem: its path first) with the values resolved into the entry it
        is about shown as their references again."""
        for path, values in self.values.items():
            if not text.startswith((f"{path}:", f"{path}.")):
                continue
            # The path stays as it is; a short value may mask more than itself (safe side).
            head, sep, rest = text.partition(":")
            for name, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
                for form in {value, quote(value, safe="")}:
                    if form:
                        rest = rest.replace(form, "${" + name + "}")
            text = head + sep + rest
        return text


def resolve_references(doc: Any, environ: Mapping[str, str]) -> Resolution:
    """Replace, in place, each `${NAME}` of a provider URL by the variable's value
    (percent-encoded, as a URL's user part needs); an unset variable is a problem naming
    it and the URL's path."""
    found = Resolution()
    for ws, path in workspaces(doc):
        for entry, entry_path in provider_entries(ws, path):
            url = entry.get("url")
            if not isinstance(url, str) or "${" not in url:
                continue

            def value(match: re.Match[str], where: str = entry_path) -> str:
                name = match.group(1)
                if name not in environ:
                    found.problems.append(f"{where}.url: ${{{name}}} is not set in the "
                                          f"environment (export {name}=... before apply)")
                    return ""
                found.values.setdefault(where, {})[name] = environ[name]
                return quote(environ[name], safe="")

            entry["url"] = REFERENCE.sub(value, url)
    return found


class ReferenceNamer:
    """Names the credentials an export takes out: `${SMTP_PASSWORD}`, then
    `${SMTP_PASSWORD_2}` for a different one; one value keeps one name."""

    def __init__(self) -> None:
        self.by_value: dict[str, str] = {}
        self.taken: set[str] = set()
        self.needed: list[dict[str, str]] = []

    def name(self, base: str, value: str, path: str) -> str:
        base = re.sub(r"[^A-Z0-9_]", "_", base.upper())
        if value not in self.by_value:
            name, n = base, 1
            while name in self.taken:
                n += 1
                name = f"{base}_{n}"
            self.taken.add(name)
            self.by_value[value] = name
        name = self.by_value[value]
        self.needed.append({"variable": name, "path": path})
        return "${" + name + "}"


def without_credentials(url: str, path: str, namer: ReferenceNamer) -> str:
    """``url`` with its password (else a lone user part) and secret query parameters
    replaced by references; every other character is kept as it was."""
    parts = urlsplit(url)
    scheme = parts.scheme or "provider"
    userinfo, at, host = parts.netloc.rpartition("@")
    if at and userinfo:
        user, colon, password = userinfo.partition(":")
        if colon and password and not REFERENCE.fullmatch(password):
            userinfo = f"{user}:{namer.name(f'{scheme}_PASSWORD', unquote(password), path)}"
        elif not colon and not REFERENCE.fullmatch(user):
            userinfo = namer.name(f"{scheme}_TOKEN", unquote(user), path)
        start = url.find("//") + 2
        if start >= 2 and url[start:start + len(parts.netloc)] == parts.netloc:
            url = url[:start] + f"{userinfo}@{host}" + url[start + len(parts.netloc):]
    head, question, rest = url.partition("?")
    if not question:
        return url
    query, hash_, fragment = rest.partition("#")
    kept = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        if (unquote(key).lower() in SECRET_PARAMETERS and value
                and not REFERENCE.fullmatch(value)):
            item = f"{key}={namer.name(f'{scheme}_{unquote(key)}', unquote(value), path)}"
        kept.append(item)
    return f"{head}?{'&'.join(kept)}{hash_}{fragment}"


def map_provider_urls(provider: Any, path: str, change: Callable[[str, str], str]) -> Any:
    """A workspace's emailProvider with each URL passed through ``change(url, path)``."""
    if isinstance(provider, dict) and isinstance(provider.get("url"), str):
        return {**provider, "url": change(provider["url"], path)}
    if isinstance(provider, list):
        return [map_provider_urls(item, f"{path}[{i}]", change)
                for i, item in enumerate(provider)]
    return provider
