"""What a first-day author tripped on (issue 40), in Chromium: a keyboard leaves the code
editor, an edit made just before leaving the page is saved, Compare reads old to new."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from engine.catalog import versions
from tests import factories
from tests.web.authoring_support import code_text, replace_text, wait_for
from tests.web.conftest import conflicting_tabs, make_user, open_editor, sign_in


def _focused_id(page: Page) -> str:
    return page.evaluate("document.activeElement && document.activeElement.id")


def test_a_keyboard_leaves_the_code_editor(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    body = page.get_by_role("textbox", name="Body", exact=True)
    # The way out is said where a screen reader reads it: the field's description.
    expect(body).to_have_accessible_description(re.compile("press Escape, then Tab"))
    body.focus()
    page.keyboard.press("Control+End")
    page.keyboard.press("Tab")  # indents, as in any code editor
    expect(body).to_be_focused()
    ring = page.evaluate("getComputedStyle(document.querySelector('.code-editor')).outlineStyle")
    assert ring != "none"  # a visible focus ring around the editor

    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    expect(page.get_by_role("textbox", name="HTML head", exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    expect(body).to_be_focused()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Tab")
    assert _focused_id(page) not in ("body-code", "htmlHead-code")
    # One tab went in (the first press), none of the presses that left.
    assert code_text(page, "body").count("\t") == 1


def _draft_body_is(template, text: str):
    def check() -> bool:
        draft = versions.current_draft(template)
        return draft is not None and draft.content["body"] == text
    return check


def test_an_edit_made_just_before_leaving_survives(browser: Browser, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    context = browser.new_context(base_url=live.url)
    page = context.new_page()
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    replace_text(page, "Body", "<p>Typed a moment before leaving</p>")
    page.get_by_role("link", name="Reports").click()  # well within autosave's 800 ms
    expect(page.get_by_role("heading", name="Reports", exact=True)).to_be_visible()
    wait_for(_draft_body_is(template, "<p>Typed a moment before leaving</p>"),
             "the edit to reach the draft")
    open_editor(page, template)
    assert code_text(page, "body") == "<p>Typed a moment before leaving</p>"

    # Saved and then left: nothing is pending, nothing is handed over on the way out (htmx's
    # requests are XHRs; the hand-over is a keepalive fetch).
    replace_text(page, "Body", "<p>Saved before leaving</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.url) if r.resource_type == "fetch" else None)
    page.get_by_role("link", name="Reports").click()
    expect(page.get_by_role("heading", name="Reports", exact=True)).to_be_visible()
    assert posted == []
    open_editor(page, template)

    # Leaving without a click (the tab closed, the focus still in the editor): the text
    # goes in a request that outlives the page.
    replace_text(page, "Body", "<p>Typed, then the tab closed</p>")
    page.close(run_before_unload=True)
    wait_for(_draft_body_is(template, "<p>Typed, then the tab closed</p>"),
             "the edit of a closed tab to reach the draft")
    context.close()


def test_compare_on_the_newer_row_shows_the_new_line_as_added(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    replace_text(page, "Body", "<p>Hello {{name}}</p>\n<p>A new line</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    page.get_by_role("row", name="2 Live").get_by_role("link", name="Compare").click()
    expect(page.get_by_text("The older version is on the left")).to_be_visible()
    expect(page.get_by_role("combobox", name="Older (left)")).to_have_value("1")
    expect(page.get_by_role("combobox", name="Newer (right)")).to_have_value("2")
    diff = page.get_by_role("region", name="Body changed")
    expect(diff.get_by_role("row", name=re.compile(r"added: <p>A new line"))).to_be_visible()
    expect(diff.get_by_text(re.compile("removed:"))).to_have_count(0)
    # Asked the other way round by hand, it still reads old to new.
    page.goto(f"/w/{ws.id}/templates/{template.id}/compare?a=2&b=1")
    expect(page.get_by_role("region", name="Body changed").get_by_role(
        "row", name=re.compile(r"added: <p>A new line"))).to_be_visible()


def test_the_sms_editor_says_how_many_messages_a_text_is_charged_as(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, "sms")
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    preview = page.locator("#preview")
    expect(preview).to_contain_text("will be charged as 1 text message.")
    replace_text(page, "Body", "Your code is {{code}}. " + "x" * 150)
    expect(preview).to_contain_text("GSM-7, 153 a message: will be charged as 2 text messages.")
    replace_text(page, "Body", "Ihr Code: {{code}} 😀")
    expect(preview).to_contain_text("Unicode (UCS-2")
    expect(preview).to_contain_text("will be charged as 1 text message.")


def test_leaving_a_refused_save_asks_first(browser: Browser, live):
    """A save refused for a conflict cannot be handed over: the browser asks before leaving."""
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, publish_it=False)
    _first, second = conflicting_tabs(browser, live, template, "<p>First tab</p>",
                                     "<p>Second tab</p>")

    second.on("dialog", lambda dialog: dialog.dismiss())  # "Stay on page"
    with second.expect_event("dialog") as asked:
        second.get_by_role("link", name="Reports").click(no_wait_after=True)
    assert asked.value.type == "beforeunload"
    expect(second.get_by_role("button", name="Publish")).to_be_visible()
    assert code_text(second, "body") == "<p>Second tab</p>"  # still here, unsaved
    assert versions.current_draft(template).content["body"] == "<p>First tab</p>"
