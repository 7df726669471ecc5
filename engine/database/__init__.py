"""The database: its binding, the models (one package, every table), column types,
migrations, secrets at rest, the hot notification statements, the records' vocabulary and
the cache generations that tell every process a row changed."""
