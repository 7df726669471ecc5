"""A send's attachments: media types, sizes and every filename a mail client may show,
checked before anything is written."""

from __future__ import annotations

import pytest

from tests.api.test_send import errors, post


def test_a_content_type_is_a_media_type_in_every_spelling(client, tenant):
    attachment = {"name": "a.dat", "content": "aGk="}
    for refused in ("application/x-msdownload; x=1", " APPLICATION/X-MSDOWNLOAD ", "a/b; c",
                    "application/pdf (comment)"):
        assert errors(client, tenant, {"attachments": [
            {**attachment, "contentType": refused}]}) == [
            "notifications.attachment.content_type_not_permitted"], refused
    accepted = [{**attachment, "contentType": t} for t in (
        "application/pdf", "text/plain; charset=utf-8", 'text/plain;charset="utf-8"')]
    response = post(client, {**tenant["body"], "emailOptions": {"attachments": accepted}},
                    tenant["key"])
    assert response.status_code == 202, response.json


def test_attachment_rules(client, tenant):

    attachments = [
        {"name": "", "content": "", "contentType": ""},
        {"name": "x" * 300, "content": "!!!", "contentType": "t" * 300},
        {"name": "run.exe", "content": "aGk=", "contentType": "application/x-msdownload"},
    ]
    body = {**tenant["body"], "emailOptions": {"attachments": attachments}}
    codes = set(post(client, body, tenant["key"]).json["errorCodes"])
    assert {"notifications.attachment.name_required", "notifications.attachment.content_required",
            "notifications.attachment.content_type_required",
            "notifications.attachment.name_too_long",
            "notifications.attachment.content_invalid_base64",
            "notifications.attachment.content_type_too_long",
            "notifications.attachment.name_not_permitted",
            "notifications.attachment.content_type_not_permitted"} <= codes
    eleven = [{"name": f"{i}.txt", "content": "aGk=", "contentType": "text/plain"}
              for i in range(11)]
    body = {**tenant["body"], "emailOptions": {"attachments": eleven}}
    assert "notifications.attachment.too_many" in post(client, body, tenant["key"]).json[
        "errorCodes"]


def test_decoded_size_limits_hold_even_below_the_gateway_limit():
    """A 10 MB decoded attachment needs a body over 10 MB, so these rules are checked directly."""
    import base64

    import pytest

    from engine.errors import ApiError
    from engine.sending.validation import validate_request

    big = base64.b64encode(b"\0" * (10 * 1024 * 1024 + 1)).decode()
    nine = base64.b64encode(b"\0" * (9 * 1024 * 1024)).decode()
    body = {"tenantId": "2b1c6a8e-4d0f-4c53-9d7e-2f5b0c8a9e11",
            "templateId": "7d3e1f20-1c2b-4a5d-8e9f-0a1b2c3d4e5f", "tags": [],
            "emailOptions": {"attachments": [
                {"name": "big.bin", "content": big, "contentType": "application/octet-stream"},
                *[{"name": f"{i}.bin", "content": nine, "contentType": "application/pdf"}
                  for i in range(2)]]}}
    with pytest.raises(ApiError) as err:
        validate_request(body)
    assert {"notifications.attachment.content_too_large",
            "notifications.attachment.total_content_too_large"} <= set(err.value.error_codes)


PDF = {"name": "report.pdf", "content": "aGk=", "contentType": "application/pdf"}


@pytest.mark.parametrize("content_type", [
    'application/pdf; name="evil.exe"', "application/pdf; name=evil.EXE",
    'application/pdf; name="evil.exe."', "application/pdf; filename=evil.exe",
    "application/pdf; name*=utf-8''evil.exe", "application/pdf; name*=UTF-8''evil%2Eexe",
    'application/pdf; name*0="evil"; name*1=".exe"', "application/pdf; name*0*=utf-8''ev; "
    "name*1*=il.exe", 'application/pdf; name="=?utf-8?b?ZXZpbC5leGU=?="',
    "application/x-msdos-program", "text/html", "image/svg+xml",
    # Issue 37: a part that is itself a multipart, and compiled HTML help.
    "multipart/mixed; boundary=x", "application/vnd.ms-htmlhelp",
    'application/pdf; name="x.exe::$DATA"',
])
def test_every_filename_a_client_may_show_is_checked(client, tenant, content_type):
    assert errors(client, tenant, {"attachments": [{**PDF, "contentType": content_type}]}) == [
        "notifications.attachment.content_type_not_permitted"]


@pytest.mark.parametrize("name", [
    "a.url", "a.one", "a.svg", "page.html", "book.xlam", "app.appref-ms", "start.jnlp",
    "RUN.EXE", "run.exe.", "run.exe. . ", "=?utf-8?b?ZXZpbC5leGU=?=", "a.pdf.scr",
    # Issue 37: an NTFS stream suffix, invisible characters, Excel web queries and SYLK.
    "x.exe::$DATA", "x.exe:zone", "x.exe\u200b", "x.ex\u200de", "invoice\u202efdp.exe",
    "report\ufeff.pdf", "q.iqy", "sheet.SLK",
])
def test_names_on_the_maintained_list_are_refused(client, tenant, name):
    assert errors(client, tenant, {"attachments": [{**PDF, "name": name}]}) == [
        "notifications.attachment.name_not_permitted"]


def test_documents_with_harmless_names_and_parameters_are_accepted(client, tenant):
    attachments = [PDF, {**PDF, "name": "invoice.exe.pdf"}, {**PDF, "name": "Résumé.pdf"},
                   {**PDF, "name": "日本語の報告.pdf"}, {**PDF, "name": "a;b (1).pdf"},
                   {**PDF, "contentType": 'application/pdf; name="report.pdf"'},
                   {**PDF, "contentType": "application/pdf; name*=utf-8''r%C3%A9sum%C3%A9.pdf"}]
    response = post(client, {**tenant["body"], "emailOptions": {"attachments": attachments}},
                    tenant["key"])
    assert response.status_code == 202, response.json


def test_attachment_names_windows_reads_otherwise_are_refused(client, tenant):
    # A stream suffix, a device name, a trailing dot or space: Windows opens or saves
    # something other than what the name says (a.pdf. is a.pdf; CON is the console).
    attachment = {"content": "aGk=", "contentType": "application/pdf"}
    for name in ("a.pdf::$DATA", "a.pdf:stream", "a:b.pdf", "CON", "con.pdf", "Aux.txt", "nul",
                 "COM1.pdf", "lpt9", "CONIN$", "a.pdf.", "a.pdf ", "a.pdf. .", "..", "."):
        assert errors(client, tenant, {"attachments": [{**attachment, "name": name}]}) == [
            "notifications.attachment.name_not_permitted"], name
    accepted = [{**attachment, "name": n} for n in (
        "console.pdf", "a.b.pdf", "COM10.pdf", "connect.txt", "report 2026.pdf", "nul-1.pdf")]
    response = post(client, {**tenant["body"], "emailOptions": {"attachments": accepted}},
                    tenant["key"])
    assert response.status_code == 202, response.json
