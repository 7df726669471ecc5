"""What Herald keeps: the database (binding, models, column types, migrations, secrets at
rest, the hot notification statements) and Redis (the embedded server for dev and tests, the
job hand-off to RQ, the request path's Lua scripts)."""
