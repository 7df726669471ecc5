"""Which attachment names and types are refused as executable, and every filename a mail
client may show for one attachment.

The extension list is the union, kept up to date by hand, of:
- Microsoft's "Blocked attachments in Outlook" (Level 1 file types, Microsoft Support),
- Google's "File types blocked in Gmail" (Gmail Help),
- the HTML-smuggling and shortcut types seen in phishing since (``.html``, ``.svg``,
  ``.url``, ``.one``) and macro-enabled Office files (``.docm``, ``.xlam``, ...).
Review it when either vendor's page changes (docs/api.md says so too).
"""

from __future__ import annotations

import re
import unicodedata
from email.header import decode_header, make_header
from email.message import Message
from email.utils import collapse_rfc2231_value

OUTLOOK_LEVEL1 = """
ade adp app appcontent-ms application appref-ms asp aspx asx bas bat bgi cab cer chm cmd cnt
com cpl crt csh der diagcab exe fxp gadget grp hlp hpj hta htc inf ins iso isp its jar jnlp js
jse ksh lnk mad maf mag mam maq mar mas mat mau mav maw mcf mda mdb mde mdt mdw mdz msc msh
msh1 msh2 mshxml msh1xml msh2xml msi msp mst msu ops osd pcd pif pl plg prf prg
printerexport ps1 ps1xml ps2 ps2xml psc1 psc2 psd1 psdm1 pst py pyc pyo pyw pyz pyzw reg scf
scr sct settingcontent-ms shb shs theme tmp url vb vbe vbp vbs vhd vhdx vsmacros vsw webpnp
website ws wsb wsc wsf wsh xbap xll xnk
"""
GMAIL_BLOCKED = """
ade adp apk appx appxbundle bat cab chm cmd com cpl diagcab diagcfg diagpack dll dmg ex ex_
exe hta img ins iso isp jar jnlp js jse lib lnk mde msc msi msix msixbundle msp mst nsh pif
ps1 scr sct shb sys vb vbe vbs vhd vxd wsc wsf wsh xll
"""
SMUGGLING_AND_MACROS = """
html htm shtml xhtml mht mhtml svg svgz xht one onepkg library-ms search-ms searchconnector-ms
docm dotm xlsm xltm xlam pptm potm ppam ppsm sldm
mjs psm1 sh bash zsh command run bin elf deb rpm pkg ipa action workflow php rb jsp cgi inf
iqy slk dqy rqy oqy
"""
# Excel web queries (.iqy, .dqy, .rqy, .oqy) fetch and run a remote sheet; SYLK (.slk) runs
# formulas and DDE on opening: both have carried malware campaigns (issue 37).
EXECUTABLE_EXTENSIONS = frozenset(
    " ".join((OUTLOOK_LEVEL1, GMAIL_BLOCKED, SMUGGLING_AND_MACROS)).split())
EXECUTABLE_TYPES = re.compile(
    r"^application/(x-(ms)?dos(-)?exec(utable)?|x-msdos-program|x-msdownload|x-msi|"
    r"x-executable|x-sh|x-csh|x-shellscript|x-bat|x-ms-shortcut|x-python(-code)?|x-perl|"
    r"x-ruby|x-php|javascript|x-javascript|ecmascript|java-archive|x-java-archive|"
    r"x-java-jnlp-file|vnd\.microsoft\.portable-executable|x-elf|x-mach-binary|hta|"
    r"x-ms-installer|x-ms-application|vnd\.ms-excel\.addin\.macroenabled\.12|"
    r"vnd\.android\.package-archive|x-apple-diskimage|x-powershell|vbscript|x-vbscript|"
    r"xhtml\+xml|onenote|msonenote|internet-shortcut|x-url|vnd\.ms-htmlhelp|x-chm|"
    r"x-ms-htmlhelp)$|^multipart/.*$|"
    r"^text/(javascript|ecmascript|x-python|x-shellscript|x-sh|vbscript|x-perl|x-php|jscript|"
    r"html|x-url)$|^image/svg\+xml$|^message/rfc822$", re.IGNORECASE)
# Windows drops trailing dots and spaces from a name, so "evil.exe." opens as evil.exe.
_TRAILING = " .\t"


# Characters a reader cannot see but that change which name a client or a file system
# takes: format characters (zero-width space and joiners, bidirectional overrides, the
# byte order mark, tags), variation selectors and the fillers that render as nothing.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000e0000-\U000e0fff]")


def hidden_characters(name: str) -> bool:
    """Whether ``name`` holds a character nobody sees (``x.exe`` + a zero-width space
    would show as ``x.exe`` and pass the extension check as ``exe\u200b``)."""
    return _INVISIBLE.search(name) is not None or any(
        unicodedata.category(c) in ("Cf", "Co", "Cn") for c in name if not c.isascii())


def executable_name(name: str) -> bool:
    """Whether ``name``'s last extension is on the list, in any case and with trailing dots
    or spaces (``a.pdf.exe`` is; ``invoice.exe.pdf`` is not); a name with an invisible
    character is refused as well, and an NTFS stream suffix (``x.exe::$DATA``,
    ``x.exe:s``, which Windows opens as ``x.exe``) is read past."""
    if hidden_characters(name):
        return True
    stem = name.split(":", 1)[0]
    parts = stem.strip().rstrip(_TRAILING).lower().rsplit(".", 1)
    return len(parts) == 2 and parts[1].strip() in EXECUTABLE_EXTENSIONS


# MS-DOS device names: Windows opens the device, whatever extension follows (CON.pdf is
# the console), as for CONIN$ and CONOUT$.
_DEVICE = re.compile(r"(con|prn|aux|nul|com[1-9\u00b9\u00b2\u00b3]|lpt[1-9\u00b9\u00b2\u00b3]"
                     r"|conin\$|conout\$)", re.IGNORECASE)


def misleading_name(name: str) -> bool:
    """Whether Windows would save or open ``name`` as something else: an NTFS stream
    (``a.pdf::$DATA``), a device (``CON``, ``nul.txt``), a name ending in a dot or space
    (saved as ``a.pdf``, so the name shown is not the one checked), or only dots."""
    stem = name.split(".", 1)[0].rstrip(" ")
    return (":" in name or name != name.rstrip(_TRAILING) or not name.strip(". ")
            or _DEVICE.fullmatch(stem) is not None)


def executable_type(content_type: str) -> bool:
    """Whether the media type itself (parameters aside) is executable or a script."""
    return EXECUTABLE_TYPES.fullmatch(content_type.split(";")[0].strip()) is not None


def names_in_content_type(content_type: str) -> list[str]:
    """Every filename a client may show from a Content-Type: ``name`` and ``filename``,
    plain, RFC 2231 (``name*=utf-8''a.exe``, ``name*0=..; name*1=..``) and RFC 2047
    encoded-words, decoded as a mail client decodes them."""
    header = Message()
    header["Content-Type"] = content_type
    names = []
    for key in ("name", "filename"):
        value = header.get_param(key)
        if value is None or value == "":
            continue
        text = collapse_rfc2231_value(value) if isinstance(value, tuple) else str(value)
        names.extend(shown_names(text))
    return names


def shown_names(name: str) -> list[str]:
    """``name`` and, when it holds RFC 2047 encoded-words (``=?utf-8?b?ZXZpbC5leGU=?=``),
    the name a client decodes them to."""
    if "=?" not in name:
        return [name]
    try:
        return [name, str(make_header(decode_header(name)))]
    except (ValueError, LookupError):  # not an encoded word a client could read either
        return [name]
