"""engine/authoring/hierarchy.py: the rules behind the Templates pages."""

from __future__ import annotations

import pytest

from engine.authoring import hierarchy
from engine.authoring.hierarchy import HierarchyError
from engine.catalog.versions import publish
from engine.database.models import Container, Notification, Project, Template, TemplateVersion
from tests import factories


@pytest.fixture
def ws(settings):
    return factories.workspace()


def _draft(template: Template, body: str = "<p>Hi</p>") -> TemplateVersion:
    return TemplateVersion.create(template=template, number=1, status="draft", content={
        "subject": "s", "body": body, "htmlHead": None, "fromAddress": "a@example.com",
        "fromName": None, "emailType": "Transactional", "trackOpens": False,
        "trackClicks": False})


def test_names_are_unique_among_siblings_whatever_their_case(ws):
    project = hierarchy.create_project(ws, "  Onboarding ")
    assert project.name == "Onboarding"
    assert project.defaults == {"to": [], "cc": [], "bcc": []}
    with pytest.raises(HierarchyError, match="exists"):
        hierarchy.create_project(ws, "onboarding")
    folder = hierarchy.create_folder(project, None, "Emails")
    with pytest.raises(HierarchyError) as refused:
        hierarchy.create_folder(project, None, "EMAILS")
    assert refused.value.field == "name"
    # The same name one level down, or in another project, is another place.
    inner = hierarchy.create_folder(project, folder, "Emails")
    assert inner.parent_id == folder.id
    hierarchy.create_template(project, folder, "Welcome", "email")
    with pytest.raises(HierarchyError):
        hierarchy.create_template(project, folder, "welcome", "sms")
    assert hierarchy.create_template(project, inner, "Welcome", "sms").channel == "sms"


@pytest.mark.parametrize("name", ["", "   ", "x" * 201, None])
def test_a_blank_or_long_name_is_refused(ws, name):
    with pytest.raises(HierarchyError) as refused:
        hierarchy.create_project(ws, name)
    assert refused.value.field == "name"
    assert not Project.select().exists()


def test_an_unknown_channel_is_refused(ws):
    project = hierarchy.create_project(ws, "P")
    with pytest.raises(HierarchyError) as refused:
        hierarchy.create_template(project, None, "T", "fax")
    assert refused.value.field == "channel"


def test_a_folder_moves_with_everything_under_it_into_another_project(ws):
    one, two = hierarchy.create_project(ws, "One"), hierarchy.create_project(ws, "Two")
    outer = hierarchy.create_folder(one, None, "Outer")
    inner = hierarchy.create_folder(one, outer, "Inner")
    deep = hierarchy.create_template(one, inner, "Deep", "email")
    hierarchy.move_folder(outer, two, None)
    assert Container.get_by_id(inner.id).project_id == two.id
    assert Template.get_by_id(deep.id).project_id == two.id
    assert Container.get_by_id(outer.id).parent_id is None
    with pytest.raises(HierarchyError, match="into itself"):
        hierarchy.move_folder(outer, two, Container.get_by_id(inner.id))
    with pytest.raises(HierarchyError, match="that project"):
        hierarchy.move_folder(Container.get_by_id(inner.id), one, Container.get_by_id(outer.id))


def test_a_move_onto_a_taken_name_is_refused(ws):
    project = hierarchy.create_project(ws, "P")
    a, b = hierarchy.create_folder(project, None, "A"), hierarchy.create_folder(project, None, "B")
    hierarchy.create_template(project, a, "Same", "email")
    other = hierarchy.create_template(project, b, "Same", "email")
    with pytest.raises(HierarchyError, match="already there"):
        hierarchy.move_template(other, project, a)
    assert Template.get_by_id(other.id).container_id == b.id


def test_contents_count_what_a_delete_takes(ws):
    project = hierarchy.create_project(ws, "P")
    outer = hierarchy.create_folder(project, None, "Outer")
    inner = hierarchy.create_folder(project, outer, "Inner")
    published = hierarchy.create_template(project, inner, "Live", "email")
    publish(_draft(published))
    _draft(hierarchy.create_template(project, outer, "Draft only", "email"))
    assert hierarchy.contents(outer) == hierarchy.Contents(1, 2, 1)
    assert hierarchy.contents(inner) == hierarchy.Contents(0, 1, 1)
    assert hierarchy.contents(project) == hierarchy.Contents(2, 2, 1)
    assert hierarchy.has_published(published)
    assert hierarchy.contents(hierarchy.create_folder(project, None, "Empty")).empty


def test_delete_takes_the_folder_tree_and_keeps_sent_notifications(ws):
    project = hierarchy.create_project(ws, "P")
    outer = hierarchy.create_folder(project, None, "Outer")
    inner = hierarchy.create_folder(project, outer, "Inner")
    template = hierarchy.create_template(project, inner, "T", "email")
    publish(_draft(template))
    sent = factories.notification(ws, factories.email_payload())
    Notification.update(template=template.id).where(Notification.id == sent.id).execute()
    keep = hierarchy.create_template(project, None, "Keep", "email")
    hierarchy.delete(outer)
    assert not Container.select().where(Container.id.in_([outer.id, inner.id])).exists()
    assert not Template.select().where(Template.id == template.id).exists()
    assert not TemplateVersion.select().where(TemplateVersion.template == template.id).exists()
    assert Notification.get_by_id(sent.id).template_id is None
    assert Template.get_by_id(keep.id).name == "Keep"
    hierarchy.delete(project)
    assert not Project.select().exists() and not Template.select().exists()


def test_recipients_are_checked_per_kind(ws):
    assert hierarchy.parse_recipients("a@example.com, b@example.com\n\nA@example.com",
                                      numbers=False, field="to") == [
        "a@example.com", "b@example.com"]
    assert hierarchy.parse_recipients("+14155550100", numbers=True, field="to") == [
        "+14155550100"]
    with pytest.raises(HierarchyError) as refused:
        hierarchy.parse_recipients("a@example.com\nnot an address", numbers=False, field="cc")
    assert (refused.value.field, "not an address" in str(refused.value)) == ("cc", True)
    with pytest.raises(HierarchyError):
        hierarchy.parse_recipients("a@example.com", numbers=True, field="to")


def test_inherited_defaults_name_where_they_come_from(ws):
    project = hierarchy.create_project(ws, "P")
    hierarchy.set_defaults(project, {"bcc": ["audit@example.com"]})
    folder = hierarchy.create_folder(project, None, "F")
    template = hierarchy.create_template(project, folder, "T", "email")
    assert project.defaults == {"to": [], "cc": [], "bcc": ["audit@example.com"]}
    assert hierarchy.inherited(template) == [
        ("project P", {"to": [], "cc": [], "bcc": ["audit@example.com"]})]
    hierarchy.set_defaults(folder, {"to": ["team@example.com"]})
    assert [where for where, _ in hierarchy.inherited(template)] == ["project P", "folder F"]
    assert [label for _, _, label in hierarchy.locations(ws)] == ["P", "P / F"]
