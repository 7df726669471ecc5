"""Migration step 7 (the editor's columns and table) on a database made before it."""

from __future__ import annotations

from peewee import SqliteDatabase

from engine.database.db import database
from engine.database.migrations import MIGRATIONS
from engine.database.models import TemplateVersion

NEW_COLUMNS = {"revision", "edited_at", "edited_by", "published_by"}


def test_step_7_adds_the_draft_columns_and_the_sample_table(tmp_path):
    old = SqliteDatabase(str(tmp_path / "old.sqlite3"))
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        for column in NEW_COLUMNS:  # as step 1 made the table before the editor existed
            old.execute_sql(f'ALTER TABLE template_version DROP COLUMN "{column}"')
        old.execute_sql("DROP TABLE IF EXISTS template_sample")
        MIGRATIONS[6](old)
        MIGRATIONS[6](old)  # step 1 of a new database made them already: nothing to do
        columns = {c.name for c in old.get_columns(TemplateVersion._meta.table_name)}
        assert columns >= NEW_COLUMNS
        assert old.table_exists("template_sample")
        old.execute_sql("INSERT INTO template_version (id, template_id, number, status, "
                        "locked, content, created_at) VALUES ('x', 'y', 1, 'draft', 0, '{}', "
                        "'2026-01-01')")
        (revision,) = old.execute_sql("SELECT revision FROM template_version").fetchone()
        assert revision == 0
    finally:
        database.initialize(previous)
        old.close()
