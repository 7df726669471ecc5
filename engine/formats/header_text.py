"""What may stand in a message header: the API refuses anything else in what it is given,
and the email channel neutralises it in whatever reaches it (a tag in a subject, a stored
payload, a plugin)."""

from __future__ import annotations

import re

# What no address, name or header value may hold: each ends a header line somewhere between
# here and the reader (compat32's folding splits at \v, \f, \x1c-\x1e and a lone \r besides
# \n; mail clients at NEL, U+2028 and U+2029), and the rest of C0 and DEL are not text.
CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
CONTROLS = re.compile(CONTROL.pattern + "+")

# A token (RFC 9110 field-name, RFC 2045 type, subtype and parameter name).
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_T = TOKEN.pattern
# RFC 2045 type/subtype and parameters, tokens or quoted strings: nothing that could end an
# attachment part's header line, or pass a check of the type in another spelling.
MEDIA_TYPE = re.compile(rf' *{_T}/{_T} *(?:; *{_T}=(?:{_T}|"[ !#-\[\]-~]*") *)*')
