"""The key stored programs carry; a program whose key differs is not used."""

ENGINE_VERSION = "1"
# The key's first half names pybars3 0.9.7, the engine the design card named, which Herald
# never installed on its render path and no longer installs at all (docs/rendering.md). It
# stays in the key as it is: every program stored since then carries it, and changing it
# would only make every process recompile them.
PYBARS3_VERSION = "0.9.7"
VERSION_KEY = f"pybars3-{PYBARS3_VERSION}/herald-engine-{ENGINE_VERSION}"
