"""Send to a list request by request (Flask's client, no browser): tenancy, CSRF, a double
click, cancel, a webhook template, and the audit log naming who sent which list."""

from __future__ import annotations

import io

import pytest

from engine.database.models import Notification
from engine.database.models.lists import RecipientList
from engine.database.models.people import AuditEvent
from engine.queue.queueing import BULK_QUEUE_NAME
from tests import factories
from tests.web.conftest import make_user
from tests.web.test_authoring_requests import Client

CSV = b"email address,name\nada@example.net,Ada\ngrace@example.net,Grace\n"


@pytest.fixture
def ws(settings):
    return factories.workspace()


@pytest.fixture
def mia(app, ws) -> Client:
    make_user("mia@example.com", ws, "member", "Mia")
    return Client(app, "mia@example.com")


def _upload(client: Client, ws, template, data: bytes = CSV, csrf: bool = True):
    form = {"recipients": (io.BytesIO(data), "people.csv")}
    if csrf:
        form["csrf_token"] = client.token
    return client.http.post(f"/w/{ws.id}/templates/{template.id}/lists", data=form,
                            content_type="multipart/form-data")


def test_a_member_uploads_checks_and_sends_once_however_often_they_click(mia, ws, settings):
    template = factories.template(ws)
    answer = _upload(mia, ws, template)
    assert answer.status_code == 303
    page = mia.get(answer.headers["Location"])
    assert "Send 2 notifications" in page.text and 'sandbox=""' in page.text
    kept = RecipientList.get()
    send = f"/w/{ws.id}/templates/{template.id}/lists/{kept.id}/send"
    assert mia.post(send).status_code == 303
    assert mia.post(send).status_code == 303  # a double click starts nothing twice
    from redis import Redis

    queued = [j.decode() for j in Redis.from_url(settings.redis_url).lrange(
        f"rq:queue:{BULK_QUEUE_NAME}", 0, -1)]
    assert queued == [f"list-{kept.id.hex}-0"]
    (event,) = AuditEvent.select().where(AuditEvent.action == "list.sent")
    assert (event.actor_label, event.subject, event.details["rows"]) == (
        "mia@example.com", "people.csv", 2)
    page = mia.get(f"/w/{ws.id}/templates/{template.id}/lists/{kept.id}")
    assert "Sending: 0 of 2 rows accepted." in page.text and "Cancel list" in page.text
    assert mia.post(f"/w/{ws.id}/templates/{template.id}/lists/{kept.id}/cancel"
                    ).status_code == 303
    assert RecipientList.get().status == "cancelled"
    assert AuditEvent.select().where(AuditEvent.action == "list.cancelled").count() == 1
    assert Notification.select().count() == 0


def test_another_workspaces_list_is_not_found(app, mia, ws):
    other = factories.workspace()
    theirs = factories.template(other)
    grace = Client(app, make_user("grace@example.com", other, "member").email)
    assert _upload(grace, other, theirs).status_code == 303
    kept = RecipientList.get()
    mine = factories.template(ws)
    for path in (f"/w/{other.id}/templates/{theirs.id}/lists/{kept.id}",
                 f"/w/{ws.id}/templates/{theirs.id}/lists/{kept.id}",
                 f"/w/{ws.id}/templates/{mine.id}/lists/{kept.id}",
                 f"/w/{ws.id}/templates/{mine.id}/lists/not-a-uuid"):
        assert mia.get(path).status_code == 404, path
    assert mia.post(f"/w/{ws.id}/templates/{mine.id}/lists/{kept.id}/send"
                    ).status_code == 404
    assert RecipientList.get().status == "checked"


def test_an_upload_without_its_csrf_token_is_refused(mia, ws, settings):
    template = factories.template(ws)
    for _ in range(3):  # each refusal gives back the slot the upload took before its body
        answer = _upload(mia, ws, template, csrf=False)
        assert answer.status_code == 400 and "did not come from this site" in answer.text
    forged = {"recipients": (io.BytesIO(CSV), "people.csv"), "csrf_token": "forged"}
    answer = mia.http.post(f"/w/{ws.id}/templates/{template.id}/lists", data=forged,
                           content_type="multipart/form-data")
    assert answer.status_code == 400 and "did not come from this site" in answer.text
    assert RecipientList.select().count() == 0
    from redis import Redis

    assert int(Redis.from_url(settings.redis_url).get(f"herald:lists:checking:{ws.id}")
               or 0) == 0


def test_a_third_upload_at_once_is_the_form_again_with_why(mia, ws):
    from engine.lists import uploads

    template = factories.template(ws)
    uploads.take_slot(ws)
    uploads.take_slot(ws)  # two uploads of this workspace in progress
    answer = _upload(mia, ws, template)
    assert answer.status_code == 429
    assert "2 files of this workspace are being uploaded or checked" in answer.text
    assert RecipientList.select().count() == 0
    uploads.free_slot(ws)
    assert _upload(mia, ws, template).status_code == 303


def test_no_file_is_the_form_again_and_a_webhook_template_has_no_list(mia, ws):
    template = factories.template(ws)
    answer = mia.http.post(f"/w/{ws.id}/templates/{template.id}/lists",
                           data={"csrf_token": mia.token},
                           content_type="multipart/form-data")
    assert answer.status_code == 400
    assert "Choose a file of recipients (CSV, .xlsx or .ods)." in answer.text
    hook = factories.template(ws, "webhook")
    assert mia.get(f"/w/{ws.id}/templates/{hook.id}/lists/new").status_code == 404
    assert "Send to a list" not in mia.get(f"/w/{ws.id}/templates/{hook.id}").text
    assert "Send to a list" in mia.get(f"/w/{ws.id}/templates/{template.id}").text


def test_an_xlsx_and_an_ods_list_send_as_the_same_csv_would(mia, ws, settings):
    from engine.lists import sending
    from tests.support.spreadsheet_files import ods, xlsx

    template = factories.template(ws)
    rows = [["email address", "name"], ["ada@example.net", "Ada"],
            ["grace@example.net", "Grace"]]
    kept = {}
    for data, name in ((CSV, "people.csv"), (xlsx(rows), "people.xlsx"),
                       (ods(rows), "people.ods")):
        form = {"recipients": (io.BytesIO(data), name), "csrf_token": mia.token}
        answer = mia.http.post(f"/w/{ws.id}/templates/{template.id}/lists", data=form,
                               content_type="multipart/form-data")
        assert answer.status_code == 303, answer.text
        kept[name] = RecipientList.get(RecipientList.filename == name)
        assert "Send 2 notifications" in mia.get(answer.headers["Location"]).text
    assert kept["people.xlsx"].rows == kept["people.csv"].rows == kept["people.ods"].rows
    for name, one in kept.items():
        assert mia.post(f"/w/{ws.id}/templates/{template.id}/lists/{one.id}/send"
                        ).status_code == 303, name
        sending.expand(str(one.id))
    sent = {}
    for n in Notification.select():
        sent.setdefault(n.correlation_id.rsplit("-", 1)[0], []).append(
            (n.correlation_id.rsplit("-", 1)[1], n.payload))
    payloads = [sorted((row, str(p)) for row, p in v) for v in sent.values()]
    assert len(payloads) == 3 and payloads[0] == payloads[1] == payloads[2]


def test_a_file_named_xlsx_that_is_not_one_says_so(mia, ws):
    template = factories.template(ws)
    form = {"recipients": (io.BytesIO(CSV), "people.xlsx"), "csrf_token": mia.token}
    answer = mia.http.post(f"/w/{ws.id}/templates/{template.id}/lists", data=form,
                           content_type="multipart/form-data")
    assert answer.status_code == 400
    assert "The file is named .xlsx but is not a spreadsheet (CSV or text)" in answer.text
