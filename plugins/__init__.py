"""Built-in provider backends, each a pluggy plugin like any third-party one."""
