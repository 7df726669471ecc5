"""Which writing systems an address mixes: `\u043ewner@b.example` with a Cyrillic o reads as
`owner@b.example`, so a page that confirms it must say what it really is (UTS 39's
mixed-script detection, kept to what a person comparing two addresses needs)."""

from __future__ import annotations

import unicodedata

import idna

# Words unicodedata puts before a script's name (FULLWIDTH LATIN SMALL LETTER A).
_PREFIXES = ("FULLWIDTH", "HALFWIDTH", "MATHEMATICAL", "CIRCLED", "PARENTHESIZED", "SMALL")


def _script(char: str) -> str | None:
    """A letter's script by its Unicode name's first word (LATIN, CYRILLIC, GREEK...)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    words = unicodedata.name(char, "UNKNOWN").split()
    while len(words) > 1 and words[0] in _PREFIXES:
        words = words[1:]
    return "Han" if words[0] == "CJK" else words[0].title()


def mixed_scripts(address: str) -> list[str]:
    """The scripts that one part of ``address`` mixes (its local part, or one label of its
    domain), sorted; [] when every part keeps to one script."""
    local, _, domain = address.rpartition("@")
    mixed: set[str] = set()
    for part in (local, *domain.split(".")):
        scripts = {s for c in part if (s := _script(c))}
        if len(scripts) > 1:
            mixed |= scripts
    return sorted(mixed)


def spelled_out(address: str) -> str:
    """``address`` as nobody can misread it: each non-ASCII character of the local part as
    U+XXXX, the domain in its ASCII (punycode) form."""
    local, _, domain = address.rpartition("@")
    shown = "".join(c if c.isascii() else f"[U+{ord(c):04X}]" for c in local)
    try:
        ascii_domain = idna.encode(domain, uts46=True).decode("ascii")
    except idna.IDNAError:
        ascii_domain = "".join(c if c.isascii() else f"[U+{ord(c):04X}]" for c in domain)
    return f"{shown}@{ascii_domain}"
