"""The authoring pages request by request (Flask's client, no browser): tenancy, CSRF, the
preview frame's sandbox, escaping, bad input, and every form without JavaScript."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.catalog import versions
from engine.database.models import Container, Notification, Project, Template, TemplateVersion
from tests import factories
from tests.web.conftest import PASSWORD, make_user

HTMX = {"HX-Request": "true"}


class Client:
    """A signed-in browser without JavaScript: its session cookie and CSRF token."""

    def __init__(self, app, email: str) -> None:
        self.http = app.test_client()
        page = self.http.get("/").text
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        signed = self.http.post("/", data={"email": email, "password": PASSWORD,
                                           "csrf_token": token})
        assert signed.status_code == 302, signed.text
        self.token = self._token(self.http.get("/workspaces").text)

    @staticmethod
    def _token(html: str) -> str:
        return re.search(r'"X-CSRFToken": "([^"]+)"', html).group(1)

    def get(self, path: str, **kwargs):
        return self.http.get(path, **kwargs)

    def post(self, path: str, data: dict | None = None, headers: dict | None = None,
             csrf: bool = True):
        data = {**(data or {}), **({"csrf_token": self.token} if csrf else {})}
        return self.http.post(path, data=data, headers=headers or {})


@pytest.fixture
def ws(settings):
    return factories.workspace()


@pytest.fixture
def ada(app, ws) -> Client:
    make_user("ada@example.com", ws, "member", "Ada")
    return Client(app, "ada@example.com")


def _email_form(**fields) -> dict:
    return {"subject": "Hi {{name}}", "body": "<p>Hi {{name}}</p>", "htmlHead": "",
            "fromAddress": "hello@example.com", "fromName": "Acme",
            "emailType": "Transactional", **fields}


def test_a_member_creates_a_project_a_folder_and_a_template(ada, ws):
    base = f"/w/{ws.id}"
    made = ada.post(f"{base}/templates/new", {"kind": "project", "name": "Onboarding"})
    project = Project.get(Project.name == "Onboarding")
    assert made.status_code == 303 and made.location.endswith(f"/projects/{project.id}")
    ada.post(f"{base}/templates/new", {"kind": "folder", "name": "Emails",
                                       "location": f"project:{project.id}"})
    folder = Container.get(Container.name == "Emails")
    made = ada.post(f"{base}/templates/new", {"kind": "template", "name": "Welcome",
                                              "channel": "email",
                                              "location": f"folder:{folder.id}"})
    template = Template.get(Template.name == "Welcome")
    assert (template.container_id, template.workspace_id) == (folder.id, ws.id)
    assert made.location.endswith(f"/templates/{template.id}")
    tree = ada.get(f"{base}/templates").text
    for name in ("Onboarding", "Emails", "Welcome"):
        assert f">{name}</a>" in tree


def test_a_refused_name_is_the_form_again_with_the_field_marked(ada, ws):
    hierarchy_page = ada.post(f"/w/{ws.id}/templates/new", {"kind": "project", "name": "  "})
    assert hierarchy_page.status_code == 400
    assert 'aria-invalid="true" aria-describedby="name-error"' in hierarchy_page.text
    assert "Enter a name." in hierarchy_page.text
    assert not Project.select().exists()


def test_another_workspaces_objects_are_not_found(app, ada, ws):
    other = factories.workspace()
    theirs = factories.template(other)
    folder = Container.create(project=theirs.project, name="F")
    for path in (f"/w/{ws.id}/templates/{theirs.id}", f"/w/{other.id}/templates/{theirs.id}",
                 f"/w/{ws.id}/templates/{theirs.id}/compare",
                 f"/w/{ws.id}/templates/{theirs.id}/preview/{'a' * 16}",
                 f"/w/{ws.id}/projects/{theirs.project_id}", f"/w/{ws.id}/folders/{folder.id}",
                 f"/w/{ws.id}/templates/{theirs.id}/manage"):
        assert ada.get(path).status_code == 404, path
    for path, data in ((f"/w/{ws.id}/templates/{theirs.id}/draft", _email_form()),
                       (f"/w/{ws.id}/templates/{theirs.id}/publish", _email_form()),
                       (f"/w/{ws.id}/templates/{theirs.id}/versions/1/lock", {}),
                       (f"/w/{ws.id}/templates/{theirs.id}/delete", {"confirm": "yes"}),
                       (f"/w/{ws.id}/folders/{folder.id}/delete", {"confirm": "yes"}),
                       (f"/w/{ws.id}/templates/new", {"kind": "folder", "name": "x",
                                                       "location": f"folder:{folder.id}"})):
        assert ada.post(path, data).status_code == 404, path
    assert Template.get_by_id(theirs.id).versions.count() == 1
    assert not versions.current_draft(theirs) and not TemplateVersion.get().locked
    assert Container.select().count() == 1


def test_every_change_needs_the_csrf_token(ada, ws):
    template = factories.template(ws)
    refused = ada.post(f"/w/{ws.id}/templates/{template.id}/draft",
                       _email_form(body="sneaky"), csrf=False)
    assert refused.status_code == 400
    assert versions.current_draft(template) is None


def test_the_preview_frame_is_sandboxed_by_the_page_and_by_its_own_policy(ada, ws):
    template = factories.template(ws, content={"body": "<p>Hi</p><script>parent.x=1</script>"})
    page = ada.get(f"/w/{ws.id}/templates/{template.id}")
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    frame_tag = re.search(r'<iframe title="Preview" sandbox=""[^>]* src="([^"]+)"', page.text)
    assert frame_tag, "the preview frame is sandboxed without allow-scripts/-same-origin"
    frame = ada.get(frame_tag.group(1).replace("&amp;", "&"))
    policy = frame.headers["Content-Security-Policy"]
    assert frame.status_code == 200 and frame.mimetype == "text/html"
    assert "sandbox" in policy.split("; ") and "default-src 'none'" in policy
    assert "script-src" not in policy and frame.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert "<script>parent.x=1</script>" in frame.text  # the document, inert in its sandbox
    assert "parent.x=1" not in page.text.replace("&lt;script&gt;parent.x=1", "")


def test_hostile_text_is_escaped_wherever_a_page_shows_it(ada, ws):
    hostile = '</textarea><script>alert(1)</script><img src=x onerror=alert(2)>'
    template = factories.template(ws, content={"subject": hostile, "body": hostile,
                                               "fromName": hostile})
    Template.update(name=hostile).where(Template.id == template.id).execute()
    pages = [ada.get(f"/w/{ws.id}/templates/{template.id}").text,
             ada.get(f"/w/{ws.id}/templates").text,
             ada.post(f"/w/{ws.id}/templates/{template.id}/preview",
                      {**_email_form(subject=hostile, body=hostile), "editor": "a" * 16,
                       "sample": '{"name": "<script>alert(3)</script>"}'}, HTMX).text]
    for html in pages:
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(" in html


def test_without_javascript_save_publish_restore_and_lock_are_forms(ada, ws):
    template = factories.template(ws)
    base = f"/w/{ws.id}/templates/{template.id}"
    saved = ada.post(f"{base}/draft", {**_email_form(body="<p>Two</p>"), "basis": ""})
    assert saved.status_code == 303 and saved.location.endswith(base)
    assert ">Saved</p>" in ada.get(base).text  # the editor's status, once
    draft = versions.current_draft(template)
    assert (draft.number, draft.content["body"]) == (2, "<p>Two</p>")
    published = ada.post(f"{base}/publish", {**_email_form(body="<p>Two</p>"),
                                             "basis": f"2:{draft.revision}"})
    assert published.status_code == 303
    assert "Published: version 2 is live" in ada.get(base).text
    assert TemplateVersion.get_by_id(draft.id).published_by == "ada@example.com"
    assert ada.post(f"{base}/versions/1/lock").status_code == 303
    assert TemplateVersion.get(TemplateVersion.number == 1).locked
    assert ada.post(f"{base}/versions/1/restore").status_code == 303
    restored = versions.current_draft(template)
    assert (restored.number, restored.content["body"]) == (3, "<p>Hello {{name}}</p>")
    compare = ada.get(f"{base}/compare?a=1&b=2")
    assert compare.status_code == 200 and "Two" in compare.text


def test_publish_of_text_that_does_not_parse_saves_it_and_marks_where(ada, ws):
    template = factories.template(ws)
    base = f"/w/{ws.id}/templates/{template.id}"
    answer = ada.post(f"{base}/publish", {**_email_form(body="<p>\n{{#if x}}"), "basis": ""})
    assert answer.status_code == 400
    assert 'id="body-error"' in answer.text and "Body: line 2, column" in answer.text
    assert 'aria-invalid="true"' in answer.text
    assert versions.current_draft(template).content["body"] == "<p>\n{{#if x}}"
    assert TemplateVersion.get(TemplateVersion.status == "live").number == 1


def test_publish_refuses_an_unverified_from_address(ada, ws):
    template = factories.template(ws)
    answer = ada.post(f"/w/{ws.id}/templates/{template.id}/publish",
                      {**_email_form(fromAddress="ceo@bank.example"), "basis": ""})
    assert answer.status_code == 400
    assert "ceo@bank.example is not a verified sender" in answer.text
    assert 'id="fromAddress-error"' in answer.text


def test_autosave_refuses_a_save_from_an_older_revision_and_offers_the_other_text(ada, ws):
    template = factories.template(ws, publish_it=False)
    draft = versions.current_draft(template)
    basis = f"{draft.number}:{draft.revision}"
    url = f"/w/{ws.id}/templates/{template.id}/draft"
    first = ada.post(url, {**_email_form(body="<p>First tab</p>"), "basis": basis}, HTMX)
    assert first.status_code == 200 and ">Saved</p>" in first.text
    assert f'value="{draft.number}:{draft.revision + 1}" hx-swap-oob="true"' in first.text
    second = ada.post(url, {**_email_form(body="<p>Second tab</p>"), "basis": basis}, HTMX)
    assert second.status_code == 200
    assert "Not saved: this draft was changed elsewhere" in second.text
    assert "&lt;p&gt;First tab&lt;/p&gt;" in second.text and 'role="alert"' in second.text
    assert versions.current_draft(template).content["body"] == "<p>First tab</p>"
    overwrite = ada.post(url, {**_email_form(body="<p>Second tab</p>"), "basis": basis,
                               "overwrite": f"{draft.number}:{draft.revision + 1}"})
    assert overwrite.status_code == 303
    assert versions.current_draft(template).content["body"] == "<p>Second tab</p>"


def test_publish_after_its_own_pages_autosave_is_no_conflict(ada, ws):
    """Publish posts the whole form with the basis its page had; the page's own autosave,
    answered first (the From address's change, sent as the button was pressed), moved the
    draft on: no one else's change, as for a save. Another page's stale basis still is."""
    template = factories.template(ws, publish_it=False)
    draft = versions.current_draft(template)
    basis = f"{draft.number}:{draft.revision}"
    base = f"/w/{ws.id}/templates/{template.id}"
    page = re.search(r'name="page" value="([^"]+)"', ada.get(base).text).group(1)
    form = {**_email_form(body="<p>Mine</p>"), "basis": basis, "page": page}
    assert ">Saved</p>" in ada.post(f"{base}/draft", form, HTMX).text
    final = {**form, "body": "<p>Mine, typed on</p>"}  # the form as Publish posts it
    other = ada.post(f"{base}/publish", {**final, "page": "another-page-token"})
    assert other.status_code == 409, other.text
    published = ada.post(f"{base}/publish", final)
    assert published.status_code == 303, published.text
    live = TemplateVersion.get(TemplateVersion.status == "live")
    assert (live.number, live.content["body"]) == (draft.number, "<p>Mine, typed on</p>")


def test_bad_sample_tags_are_said_and_not_remembered(ada, ws):
    from engine.authoring import samples

    template = factories.template(ws)
    answer = ada.post(f"/w/{ws.id}/templates/{template.id}/preview",
                      {**_email_form(), "editor": "b" * 16, "sample": '{"name": '}, HTMX)
    assert answer.status_code == 200 and "Sample tags: not valid JSON" in answer.text
    assert samples.remembered(template) == {}
    ada.post(f"/w/{ws.id}/templates/{template.id}/preview",
             {**_email_form(), "editor": "b" * 16, "sample": '{"name": "Ada"}'}, HTMX)
    assert samples.remembered(template) == {"name": "Ada"}
    assert '&#34;name&#34;: &#34;Ada&#34;' in ada.get(
        f"/w/{ws.id}/templates/{template.id}").text


def test_deleting_a_folder_that_holds_templates_asks_first(ada, ws):
    template = factories.template(ws)
    folder = Container.create(project=template.project, name="Box")
    Template.update(container=folder).where(Template.id == template.id).execute()
    url = f"/w/{ws.id}/folders/{folder.id}/delete"
    asked = ada.post(url)
    assert asked.status_code == 200 and "1 template" in asked.text and "1 of them" in asked.text
    assert Container.select().count() == 1
    done = ada.post(url, {"confirm": "yes"})
    assert done.status_code == 303 and not Template.select().exists()


def test_a_stranger_to_the_workspace_sees_nothing(app, ws):
    template = factories.template(ws)
    make_user("eve@example.com", factories.workspace(), "owner", "Eve")
    eve = Client(app, "eve@example.com")
    assert eve.get(f"/w/{ws.id}/templates/{template.id}").status_code == 404
    assert eve.get(f"/w/{ws.id}/templates").status_code == 404


def test_a_template_of_a_channel_not_installed_here_says_so(ada, ws):
    template = factories.template(ws)
    Template.update(channel="fax").where(Template.id == template.id).execute()
    page = ada.get(f"/w/{ws.id}/templates/{template.id}")
    assert page.status_code == 409 and "fax, is not installed on this server" in page.text
    assert ada.post(f"/w/{ws.id}/templates/{template.id}/draft",
                    _email_form()).status_code == 409
    assert ada.get(f"/w/{ws.id}/templates/{template.id}/manage").status_code == 200


def test_a_channel_a_plugin_brings_gets_an_editor_of_its_own_fields(
        ada, ws, example_package, plugins_from):
    plugins_from(example_package("herald-chat-channel"))
    project = Project.create(workspace=ws, name="P", defaults={})
    made = ada.post(f"/w/{ws.id}/templates/new", {"kind": "template", "name": "Standup",
                                                  "channel": "chat",
                                                  "location": f"project:{project.id}"})
    template = Template.get(Template.name == "Standup")
    assert made.status_code == 303 and template.channel == "chat"
    page = ada.get(f"/w/{ws.id}/templates/{template.id}").text
    assert '<label for="body">Body</label>' in page and '<label for="url">url</label>' in page
    base = f"/w/{ws.id}/templates/{template.id}"
    refused = ada.post(f"{base}/publish", {"body": "Hi {{name}}", "url": "ftp://x",
                                           "basis": ""})
    assert refused.status_code == 400 and "url: must be the room&#39;s http(s)" in refused.text
    draft = versions.current_draft(template)
    assert draft.content == {"body": "Hi {{name}}", "url": "ftp://x"}
    published = ada.post(f"{base}/publish", {"body": "Hi {{name}}",
                                             "url": "https://chat.example/hook",
                                             "basis": f"{draft.number}:{draft.revision}"})
    assert published.status_code == 303
    assert TemplateVersion.get(TemplateVersion.template == template).status == "live"
    preview = ada.post(f"{base}/preview", {"body": "Hi {{name}}", "url": "https://c.example/h",
                                           "editor": "c" * 16, "sample": '{"name": "Ada"}'},
                       HTMX)
    assert preview.status_code == 200 and "Tags this template uses" in preview.text


# A channel a plugin brings looks like a built-in one: its own label in the template list
# and the editor, its own test-send hint and options, its own note where default recipients
# would be; and nothing of it is written outside its package.
ROOT = Path(__file__).resolve().parents[2]


def _chat_template(ada, ws) -> Template:
    project = Project.create(workspace=ws, name="P", defaults={})
    made = ada.post(f"/w/{ws.id}/templates/new", {"kind": "template", "name": "Standup",
                                                  "channel": "chat",
                                                  "location": f"project:{project.id}"})
    assert made.status_code == 303
    return Template.get(Template.name == "Standup")


def test_the_example_chat_channel_looks_like_a_built_in(ada, ws, example_package,
                                                         plugins_from):
    plugins_from(example_package("herald-chat-channel"))
    new_form = ada.get(f"/w/{ws.id}/templates/new?kind=template").text
    assert '<option value="chat"' in new_form and ">Chat</option>" in new_form
    # The built-in channels first, in the order they declare, then the plugin's.
    assert new_form.index(">Email<") < new_form.index(">SMS<") < new_form.index(">Webhook<") \
        < new_form.index(">Chat<")
    template = _chat_template(ada, ws)
    base = f"/w/{ws.id}/templates/{template.id}"
    editor = ada.get(base).text
    assert "Chat template</span>" in editor
    assert 'placeholder="Herald test"' in editor
    manage = ada.get(f"{base}/manage").text
    assert "A chat template posts to its room&#39;s URL: it has no recipients." in manage
    draft = {"body": "Standup at {{time}}", "url": "https://chat.example/hooks/ops",
             "sample": '{"time": "10:00"}'}
    refused = ada.post(f"{base}/test-sends", {**draft, "recipient": ""}, HTMX)
    assert "Test recipient: enter the name to post the test as." in refused.text
    sent = ada.post(f"{base}/test-sends", {**draft, "recipient": "Standup bot"}, HTMX)
    assert sent.status_code == 200, sent.text
    test = Notification.get(Notification.template == template)
    assert test.is_test and test.payload["username"] == "Standup bot"  # its test options
    assert test.payload["text"] == "Standup at 10:00"


def test_no_line_of_the_chat_channel_outside_its_package():
    """The web application and the engine learn of it only through the channel contract."""
    for folder in ("web", "engine", "api", "cli", "channels", "plugins", "config"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".html", ".js", ".css") and path.is_file():
                assert "chat" not in path.read_text(encoding="utf-8").lower(), path
