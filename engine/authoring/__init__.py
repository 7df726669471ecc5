"""Template authoring for the web application: the hierarchy, the editor's single draft
(autosave with conflict detection), publish checks, previews of unsaved text, test sends
and version comparison. The CLI and the API share the lifecycle underneath
(engine/catalog/versions.py), so the browser cannot publish differently from `herald`."""
