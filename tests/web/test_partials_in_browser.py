"""The Partials section in Chromium: New partial (a bad name marked), the partial's page
with the code editor and autosave, the template editor previewing with a partial's draft,
Publish with its `Used by` confirmation, Compare, a self-including partial refused naming
it, Rename and Delete refused while templates or partials call it (naming them) and done
after a confirmation when nothing does; axe finds nothing on any of these pages."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.catalog import partials
from engine.database.models.partials import Partial
from tests import factories
from tests.web.authoring_support import replace_text
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in


def _published(ws, name: str, body: str) -> None:
    partial = partials.create(ws.id, name)
    draft = partials.draft(partial)
    draft.body = body
    draft.save()
    partials.publish(draft)


def test_partials_section_create_edit_preview_publish_compare(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    _published(ws, "footer", "<p>Acme, {{city}}</p>")
    welcome = factories.template(ws, content={"body": "<p>Welcome</p>{{> footer}}"})
    receipt = factories.template(ws, content={"body": "<p>Receipt</p>{{> footer}}"})
    for template, name in ((welcome, "Welcome"), (receipt, "Receipt")):
        template.name = name
        template.save()
    factories.template(ws, content={"body": "<p>No footer here</p>"})
    sign_in(page, "mia@example.com")

    page.get_by_role("link", name="Partials", exact=True).click()
    expect(page.get_by_role("heading", name="Partials")).to_be_visible()
    expect(page.get_by_role("link", name="footer")).to_be_visible()
    assert violations(page) == []

    # New partial: a name outside the rule is refused with the field marked.
    page.get_by_role("button", name="New partial").click()
    page.get_by_role("textbox", name="Name").fill("sign off")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("textbox", name="Name")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("letters, digits")
    assert violations(page) == []
    page.get_by_role("textbox", name="Name").fill("signoff")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="signoff")).to_be_visible()
    assert Partial.get(Partial.name == "signoff").workspace_id == ws.id

    # Edit the footer: autosave says Saved; the template editor previews with the draft.
    page.get_by_role("link", name="Partials", exact=True).click()
    page.get_by_role("link", name="footer").click()
    replace_text(page, "Body", "<p>Acme Ltd, {{city}}</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    assert violations(page) == []
    page.goto(f"/w/{ws.id}/templates/{welcome.id}")
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_text("Acme Ltd,")).to_be_visible()
    expect(page.get_by_text("Shown with the draft of partial footer")).to_be_visible()

    # Publish asks first, listing the templates it changes under Used by.
    page.goto(f"/w/{ws.id}/partials/{Partial.get(Partial.name == 'footer').id}")
    page.get_by_role("button", name="Publish").click()
    used_by = page.get_by_role("region", name="Used by")
    expect(used_by.get_by_role("listitem")).to_have_text(["Receipt", "Welcome"])
    assert violations(page) == []
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 2 is live")
    live = partials.live_bodies(ws.id)["footer"]
    assert (live.number, live.body, live.published_by) == (2, "<p>Acme Ltd, {{city}}</p>",
                                                           "mia@example.com")

    # Compare the two versions: the body's change, line by line.
    page.get_by_role("link", name="Compare version 1 with version 2").click()
    expect(page.get_by_role("heading", name="Body changed")).to_be_visible()
    expect(page.get_by_role("region", name="Body changed")).to_contain_text("Acme Ltd")
    assert violations(page) == []

    # A footer that calls itself is refused at publish, naming it; the live one stays.
    page.get_by_role("link", name="Back to footer").click()
    replace_text(page, "Body", "<p>Acme</p>{{> footer}}")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("alert")).to_contain_text("the partial 'footer' includes itself")
    assert violations(page) == []
    assert partials.live_bodies(ws.id)["footer"].number == 2


def test_a_partial_in_use_is_neither_renamed_nor_deleted_and_names_its_callers(
        page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    _published(ws, "footer", "<p>Acme</p>")
    _published(ws, "layout", "<main>{{> @partial-block}}</main>{{> footer}}")
    _published(ws, "spare", "<p>Spare</p>")
    welcome = factories.template(ws, content={"body": "<p>Welcome</p>{{> footer}}"})
    welcome.name = "Welcome"
    welcome.save()
    sign_in(page, "mia@example.com")
    footer = Partial.get(Partial.name == "footer")

    # Rename and Delete of the footer are refused, naming the template and the partial.
    page.goto(f"/w/{ws.id}/partials/{footer.id}")
    page.get_by_role("textbox", name="New name").fill("site-footer")
    page.get_by_role("button", name="Rename").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("footer is in use")
    expect(alert.get_by_role("listitem")).to_have_text(["template Welcome", "partial layout"])
    expect(alert.get_by_role("link", name="Welcome")).to_be_visible()
    assert violations(page) == []
    assert Partial.get_by_id(footer.id).name == "footer"
    page.get_by_role("button", name="Delete partial").click()
    expect(page.get_by_role("alert")).to_contain_text("footer is in use")
    assert Partial.get_or_none(Partial.id == footer.id) is not None
    assert "footer" in partials.live_bodies(ws.id)

    # A name that is taken (ignoring case) or breaks the rule marks the field.
    spare = Partial.get(Partial.name == "spare")
    page.goto(f"/w/{ws.id}/partials/{spare.id}")
    page.get_by_role("textbox", name="New name").fill("Footer")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("textbox", name="New name")).to_have_attribute("aria-invalid",
                                                                           "true")
    expect(page.get_by_role("alert")).to_contain_text("already has a partial named 'Footer'")
    assert violations(page) == []

    # An unused partial is renamed, then deleted after its confirmation.
    page.get_by_role("textbox", name="New name").fill("extra")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="extra")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("Renamed: templates call it as {{> extra}}")
    assert Partial.get_by_id(spare.id).name == "extra"
    page.get_by_role("button", name="Delete partial").click()
    expect(page.get_by_role("heading", name="Delete the partial extra?")).to_be_visible()
    assert violations(page) == []
    page.get_by_role("button", name="Delete", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Deleted the partial extra.")
    expect(page.get_by_role("link", name="extra")).to_have_count(0)
    assert Partial.get_or_none(Partial.id == spare.id) is None
    assert set(partials.live_bodies(ws.id)) == {"footer", "layout"}
