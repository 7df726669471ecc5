"""Projects, folders and templates of a workspace: create, rename, move, delete, defaults.

Names follow `herald apply`'s rule and are unique among siblings, because apply matches
projects and folders by name within their parent: two folders of one name would make an
export that applies differently. Default recipients are stored in apply's shape (to, cc,
bcc, always all three), so an export of what the browser made applies as a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from peewee import fn

from engine.catalog import snapshots
from engine.catalog.defaults import LISTS
from engine.database import generations
from engine.database.db import database
from engine.database.models import Container, Project, Template, TemplateVersion, Workspace
from engine.database.vocabulary import VersionStatus
from engine.formats.addresses import dedupe, valid_e164, valid_email
from engine.plugins.manager import default_registry
from engine.provisioning.document import valid_name

MAX_DEFAULTS = 1000  # per list, as a request's recipients (spec 8.1)


class HierarchyError(ValueError):
    """A refused change; ``field`` names the form field it concerns."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Contents:
    """What goes with a project or folder when it is deleted."""

    folders: int
    templates: int
    published: int  # templates with a published version: sends by their ids will fail

    @property
    def empty(self) -> bool:
        return not (self.folders or self.templates)


def check_name(name: object) -> str:
    text = name.strip() if isinstance(name, str) else ""
    if not text:
        raise HierarchyError("Enter a name.", "name")
    if not valid_name(text):
        raise HierarchyError("Enter a name of at most 200 characters.", "name")
    return text


def _folder_taken(project: Project, parent: Container | None, name: str,
                  exclude: Container | None = None) -> bool:
    in_parent = Container.parent.is_null() if parent is None else Container.parent == parent
    query = Container.select().where(Container.project == project, in_parent,
                                     fn.LOWER(Container.name) == name.lower())
    if exclude is not None:
        query = query.where(Container.id != exclude.id)
    return query.exists()


def _template_taken(project: Project, folder: Container | None, name: str,
                    exclude: Template | None = None) -> bool:
    in_folder = Template.container.is_null() if folder is None else Template.container == folder
    query = Template.select().where(Template.project == project, in_folder,
                                    fn.LOWER(Template.name) == name.lower())
    if exclude is not None:
        query = query.where(Template.id != exclude.id)
    return query.exists()


def _project_taken(workspace: Workspace, name: str, exclude: Project | None = None) -> bool:
    query = Project.select().where(Project.workspace == workspace,
                                   fn.LOWER(Project.name) == name.lower())
    if exclude is not None:
        query = query.where(Project.id != exclude.id)
    return query.exists()


def _empty_defaults() -> dict[str, list[str]]:
    return {key: [] for key in LISTS}


def create_project(workspace: Workspace, name: str) -> Project:
    name = check_name(name)
    if _project_taken(workspace, name):
        raise HierarchyError(f"A project named “{name}” exists: choose another name.", "name")
    return Project.create(workspace=workspace, name=name, defaults=_empty_defaults())


def create_folder(project: Project, parent: Container | None, name: str) -> Container:
    name = check_name(name)
    if _folder_taken(project, parent, name):
        raise HierarchyError(f"A folder named “{name}” is already there: choose another "
                             "name.", "name")
    return Container.create(project=project, parent=parent, name=name,
                            defaults=_empty_defaults())


def create_template(project: Project, folder: Container | None, name: str,
                    channel: str) -> Template:
    name = check_name(name)
    if channel not in default_registry().channels:
        raise HierarchyError("Choose a channel: Email, SMS, Webhook or an installed plugin's.",
                             "channel")
    if _template_taken(project, folder, name):
        raise HierarchyError(f"A template named “{name}” is already there: choose another "
                             "name.", "name")
    generations.changed_workspace(project.workspace_id)  # a send may hold "no such template"
    return Template.create(workspace=project.workspace, project=project, container=folder,
                           name=name, channel=channel, defaults=_empty_defaults())


def rename(item: Project | Container | Template, name: str) -> None:
    name = check_name(name)
    if isinstance(item, Project):
        taken = _project_taken(item.workspace, name, exclude=item)
    elif isinstance(item, Container):
        taken = _folder_taken(item.project, item.parent, name, exclude=item)
    else:
        taken = _template_taken(item.project, item.container, name, exclude=item)
    if taken:
        raise HierarchyError(f"“{name}” is already taken there: choose another name.", "name")
    item.name = name
    item.save()


def _descendants(folder: Container) -> list[Container]:
    """The folder and every folder under it (breadth first, one query per level)."""
    found, level = [folder], [folder.id]
    while level:
        level = [c.id for c in Container.select(Container.id).where(Container.parent.in_(level))]
        found.extend(Container.get_by_id(i) for i in level)
    return found


def move_folder(folder: Container, project: Project, parent: Container | None) -> None:
    """Move a folder (and all it holds) under ``parent`` in ``project`` (None: the top)."""
    if parent is not None and parent.project_id != project.id:
        raise HierarchyError("Choose a folder of that project.", "location")
    inside = _descendants(folder)
    if parent is not None and parent.id in {f.id for f in inside}:
        raise HierarchyError("A folder cannot move into itself or a folder inside it.",
                             "location")
    if _folder_taken(project, parent, folder.name, exclude=folder):
        raise HierarchyError(f"A folder named “{folder.name}” is already there: rename one "
                             "first.", "location")
    with database.atomic():
        ids = [f.id for f in inside]
        if folder.project_id != project.id:
            Container.update(project=project).where(Container.id.in_(ids)).execute()
            Template.update(project=project).where(Template.container.in_(ids)).execute()
        Container.update(parent=parent).where(Container.id == folder.id).execute()
    _changed(project)


def move_template(template: Template, project: Project, folder: Container | None) -> None:
    if folder is not None and folder.project_id != project.id:
        raise HierarchyError("Choose a folder of that project.", "location")
    if _template_taken(project, folder, template.name, exclude=template):
        raise HierarchyError(f"A template named “{template.name}” is already there: rename "
                             "one first.", "location")
    template.project, template.container = project, folder
    template.save()
    _changed(template)


def _published(template_ids: list[Any]) -> int:
    if not template_ids:
        return 0
    return (TemplateVersion.select(fn.COUNT(fn.DISTINCT(TemplateVersion.template)))
            .where(TemplateVersion.template.in_(template_ids),
                   TemplateVersion.status != VersionStatus.DRAFT).scalar() or 0)


def contents(item: Project | Container) -> Contents:
    if isinstance(item, Project):
        folders = Container.select(Container.id).where(Container.project == item).count()
        templates = [t.id for t in Template.select(Template.id).where(Template.project == item)]
    else:
        inside = [f.id for f in _descendants(item)]
        folders = len(inside) - 1
        templates = [t.id for t in Template.select(Template.id)
                     .where(Template.container.in_(inside))]
    return Contents(folders, len(templates), _published(templates))


def has_published(template: Template) -> bool:
    return _published([template.id]) > 0


def delete(item: Project | Container | Template) -> None:
    """Delete with everything under it (versions included); notifications already sent
    keep their rows, without a template (the model's ON DELETE SET NULL)."""
    with database.atomic():
        if isinstance(item, Template):
            templates = [item.id]
            folders: list[Any] = []
        elif isinstance(item, Container):
            folders = [f.id for f in _descendants(item)]
            templates = [t.id for t in Template.select(Template.id)
                         .where(Template.container.in_(folders))]
        else:
            folders = [c.id for c in Container.select(Container.id)
                       .where(Container.project == item)]
            templates = [t.id for t in Template.select(Template.id)
                         .where(Template.project == item)]
        for template_id in templates:
            Template.get_by_id(template_id).delete_instance(recursive=True)
        # Innermost first: a folder's children go before it.
        for folder_id in reversed(folders):
            Container.delete().where(Container.id == folder_id).execute()
        if isinstance(item, Project):
            item.delete_instance()
    _changed(item)


def parse_recipients(text: str, *, numbers: bool, field: str) -> list[str]:
    """One address (or E.164 number) a line, or separated by commas; each checked."""
    values = [v.strip() for line in (text or "").splitlines() for v in line.split(",")]
    values = dedupe([v for v in values if v])
    if len(values) > MAX_DEFAULTS:
        raise HierarchyError(f"At most {MAX_DEFAULTS} recipients a list.", field)
    for value in values:
        if not (valid_e164(value) if numbers else valid_email(value)):
            what = "an E.164 number (+14155550100)" if numbers else "an email address"
            raise HierarchyError(f"“{value}” is not {what}.", field)
    return values


def set_defaults(item: Project | Container | Template, lists: dict[str, list[str]]) -> None:
    item.defaults = {key: list(lists.get(key) or []) for key in LISTS}
    item.save()
    _changed(item)


def _changed(item: Project | Container | Template) -> None:
    """Defaults or places changed: this process's send snapshots see it at once, every
    other process at its next request (the workspace's generation moves on at commit)."""
    snapshots.clear()
    generations.changed_workspace(_workspace_of(item))


def _workspace_of(item: Project | Container | Template) -> Any:
    return item.project.workspace_id if isinstance(item, Container) else item.workspace_id


def inherited(item: Container | Template) -> list[tuple[str, dict[str, list[str]]]]:
    """(where, defaults) for each level above ``item`` that sets any, outermost first."""
    project = item.project
    folder = item.container if isinstance(item, Template) else item.parent
    chain: list[Container] = []
    while folder is not None:
        chain.append(folder)
        folder = folder.parent
    levels = [(f"project {project.name}", project.defaults or {})]
    levels += [(f"folder {f.name}", f.defaults or {}) for f in reversed(chain)]
    return [(where, {k: list(d.get(k) or []) for k in LISTS}) for where, d in levels
            if any(d.get(k) for k in LISTS)]


def path_of(item: Container | Template) -> list[Project | Container]:
    """The project and folders above ``item``, outermost first (for breadcrumbs)."""
    folder = item.container if isinstance(item, Template) else item.parent
    chain: list[Project | Container] = []
    while folder is not None:
        chain.append(folder)
        folder = folder.parent
    return [item.project, *reversed(chain)]


def locations(workspace: Workspace, moving: Container | None = None
              ) -> list[tuple[Project, Container | None, str]]:
    """Every place a folder or template can go: each project's top and each folder; for a
    folder being moved (``moving``), never itself nor a folder inside it."""
    projects = list(Project.select().where(Project.workspace == workspace)
                    .order_by(Project.name))
    folders = list(Container.select().join(Project).where(Project.workspace == workspace)
                   .order_by(Container.name))
    children: dict[Any, list[Container]] = {}
    for folder in folders:
        children.setdefault((folder.project_id, folder.parent_id), []).append(folder)
    out: list[tuple[Project, Container | None, str]] = []

    def walk(project: Project, parent: Container | None, label: str) -> None:
        for folder in children.get((project.id, parent.id if parent else None), []):
            if moving is not None and folder.id == moving.id:
                continue  # the folder and everything under it
            here = f"{label} / {folder.name}"
            out.append((project, folder, here))
            walk(project, folder, here)

    for project in projects:
        out.append((project, None, project.name))
        walk(project, None, project.name)
    return out
