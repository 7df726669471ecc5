"""The plugin host: hook specifications, the types plugins see (contracts) and the plugin
manager that loads built-ins and third-party packages through `herald` entry points."""
