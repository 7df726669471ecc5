"""Language variants and Inline CSS in the template editor, in Chromium: Add language (a bad
tag marked), the select Language switching the fields, the warning for a tag a variant
leaves out, Publish carrying every variant; axe finds nothing."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.database.models import TemplateVersion
from engine.database.vocabulary import VersionStatus
from tests import factories
from tests.web.authoring_support import replace_text
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in


def test_add_a_language_switch_warn_and_publish(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, content={
        "subject": "Welcome {{name}}", "body": "<p>Hello {{name}}, order {{orderId}}</p>"})
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    expect(page.get_by_role("checkbox", name="Inline CSS")).to_be_checked()

    page.get_by_role("button", name="Add language").click()
    page.get_by_role("textbox", name="Language").fill("french please")
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("textbox", name="Language")).to_have_attribute("aria-invalid",
                                                                           "true")
    expect(page.get_by_role("alert")).to_contain_text("BCP 47")
    assert violations(page) == []
    page.get_by_role("textbox", name="Language").fill("fr")
    page.get_by_role("button", name="Add").click()

    # The editor shows the new language, its text started from the default's.
    expect(page.get_by_role("combobox", name="Language")).to_have_value("fr")
    expect(page.get_by_role("group", name="Language fr")).to_be_visible()
    assert page.locator("textarea[name='variants.fr.body']").input_value() == (
        "<p>Hello {{name}}, order {{orderId}}</p>")
    replace_text(page, "Body", "<p>Bonjour {{name}}</p>")
    page.get_by_role("textbox", name="Subject").fill("Bienvenue {{name}}")
    expect(page.get_by_role("status")).to_have_text("Saved")
    assert violations(page) == []

    # Switching to Default shows the version's own text; the page warns of the lost tag.
    page.get_by_role("combobox", name="Language").select_option("default")
    expect(page.get_by_role("group", name="Language fr")).to_be_hidden()
    expect(page.get_by_role("textbox", name="Subject")).to_have_value("Welcome {{name}}")
    page.goto(f"/w/{ws.id}/templates/{template.id}?language=fr")
    expect(page.get_by_text("fr leaves out the tag {{orderId}}, which the default text uses.")
           ).to_be_visible()

    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 2 is live")
    live_version = TemplateVersion.get(TemplateVersion.template == template,
                                       TemplateVersion.status == VersionStatus.LIVE)
    assert live_version.content["variants"] == [
        {"locale": "fr", "subject": "Bienvenue {{name}}", "body": "<p>Bonjour {{name}}</p>"}]
    assert live_version.content["inlineCss"] is True
    assert '"fr/body"' in live_version.compiled


def test_remove_a_language_keeps_the_typed_text_and_asks_first(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, content={
        "subject": "Welcome", "body": "<p>Hello</p>",
        "variants": [{"locale": "fr", "body": "<p>Bonjour</p>"},
                     {"locale": "de", "body": "<p>Hallo</p>"}]})
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}?language=de")
    expect(page.get_by_role("button", name="Remove language fr")).to_be_hidden()

    # The text typed just before is saved by asking; Keep it changes nothing more.
    page.get_by_role("group", name="Language de").get_by_role("textbox", name="Subject").fill(
        "Willkommen")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Remove language de").click()
    expect(page.get_by_role("heading", name="Remove the language de from the draft?")
           ).to_be_visible()
    assert violations(page) == []
    page.get_by_role("link", name="Keep it").click()
    expect(page.get_by_role("combobox", name="Language")).to_have_value("de")
    expect(page.locator("input[name='variants.de.subject']")).to_have_value("Willkommen")

    page.get_by_role("button", name="Remove language de").click()
    page.get_by_role("button", name="Remove de").click()
    expect(page.get_by_role("status")).to_contain_text("Language de removed from the draft")
    expect(page.get_by_role("combobox", name="Language").get_by_role("option")).to_have_text(
        ["Default", "fr"])
    assert violations(page) == []
    draft = TemplateVersion.get(TemplateVersion.template == template,
                                TemplateVersion.status == VersionStatus.DRAFT)
    assert draft.content["variants"] == [{"locale": "fr", "body": "<p>Bonjour</p>"}]
    live_version = TemplateVersion.get(TemplateVersion.template == template,
                                       TemplateVersion.status == VersionStatus.LIVE)
    assert [v["locale"] for v in live_version.content["variants"]] == ["fr", "de"]

    # Removed elsewhere meanwhile: the confirmation is refused rather than guessed at.
    page.goto(f"/w/{ws.id}/templates/{template.id}?language=fr")
    page.get_by_role("button", name="Remove language fr").click()
    draft.content = {**draft.content, "subject": "Changed elsewhere"}
    draft.revision += 1
    draft.save()
    page.get_by_role("button", name="Remove fr").click()
    expect(page.get_by_role("alert")).to_contain_text("Not removed: the draft changed")
    assert TemplateVersion.get_by_id(draft.id).content["variants"] == [
        {"locale": "fr", "body": "<p>Bonjour</p>"}]
