"""The Templates pages in Chromium: the tree by links, rename, move, default recipients
inherited from above, and deletion that asks first when something goes with it."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.authoring import hierarchy
from engine.database.models import Container, Template
from tests import factories
from tests.web.conftest import make_user, sign_in


def test_rename_move_recipients_and_delete(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    project = hierarchy.create_project(ws, "Onboarding")
    inbox = hierarchy.create_folder(project, None, "Inbox")
    archive = hierarchy.create_folder(project, None, "Archive")
    welcome = factories.template(ws)  # published, in a project of its own
    Template.update(project=project, container=inbox, name="Welcome").where(
        Template.id == welcome.id).execute()
    sign_in(page, "mia@example.com")

    # The tree: every project, folder and template is a link by its name.
    for name in ("Onboarding", "Inbox", "Archive", "Welcome"):
        expect(page.get_by_role("link", name=name, exact=True)).to_be_visible()
    page.get_by_role("link", name="Inbox", exact=True).click()
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()

    # Rename the folder; a sibling's name is refused with the field marked.
    page.get_by_role("link", name="Name, place and default recipients").click()
    page.get_by_role("textbox", name="Name").fill("archive")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("textbox", name="Name")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("already taken")
    page.get_by_role("textbox", name="Name").fill("Welcome mail")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Welcome mail")).to_be_visible()

    # Default recipients on the project show, inherited, on the template below it.
    page.get_by_role("link", name="Onboarding").first.click()
    page.get_by_role("link", name="Name, place and default recipients").click()
    page.get_by_role("textbox", name="Bcc").fill("audit@example.com")
    page.get_by_role("button", name="Save recipients").click()
    expect(page.get_by_text("Here: Bcc: audit@example.com")).to_be_visible()
    page.get_by_role("link", name="Welcome", exact=True).click()
    page.get_by_role("link", name="Name, place and default recipients").click()
    expect(page.get_by_text("Inherited from project Onboarding: Bcc: audit@example.com")
           ).to_be_visible()
    page.get_by_role("textbox", name="To", exact=True).fill("team@example.com\nnot an address")
    page.get_by_role("button", name="Save recipients").click()
    expect(page.get_by_role("alert")).to_contain_text("“not an address” is not an email")
    page.get_by_role("textbox", name="To", exact=True).fill("team@example.com")
    page.get_by_role("button", name="Save recipients").click()
    expect(page.get_by_role("status")).to_be_visible()  # back in the editor
    assert Template.get_by_id(welcome.id).defaults == {"to": ["team@example.com"], "cc": [],
                                                       "bcc": []}
    expect(page.get_by_text("To: team@example.com. Bcc: audit@example.com.")).to_be_visible()

    # Move the template to the other folder.
    page.get_by_role("link", name="Name, place and default recipients").click()
    page.get_by_role("combobox", name="Location").select_option(label="Onboarding / Archive")
    page.get_by_role("button", name="Move").click()
    expect(page.get_by_role("link", name="Archive")).to_be_visible()  # its breadcrumb
    assert Template.get_by_id(welcome.id).container_id == archive.id

    # Deleting the folder holding a published template asks first and says what goes.
    page.get_by_role("link", name="Archive").click()
    page.get_by_role("link", name="Name, place and default recipients").click()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("1 template, 1 of them published")).to_be_visible()
    assert Container.select().where(Container.id == archive.id).exists()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="Onboarding")).to_be_visible()
    assert not Template.select().where(Template.id == welcome.id).exists()
    # An empty folder goes at once.
    page.get_by_role("link", name="Welcome mail").click()
    page.get_by_role("link", name="Name, place and default recipients").click()
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="Onboarding")).to_be_visible()
    assert not Container.select().exists()


def test_a_template_with_published_versions_asks_before_it_goes(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    draft_only = factories.template(ws, publish_it=False)
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}/manage")
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("Sends by the id of a deleted template fail")).to_be_visible()
    page.get_by_role("link", name="Keep it").click()
    assert Template.select().where(Template.id == template.id).exists()
    page.goto(f"/w/{ws.id}/templates/{draft_only.id}/manage")
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name=draft_only.project.name)).to_be_visible()
    assert not Template.select().where(Template.id == draft_only.id).exists()
