"""The key stored programs carry; a program whose key differs is not used."""

ENGINE_VERSION = "1"
# pybars3 is the engine the design names; its version stays part of the key so that a
# change of the pinned dependency invalidates stored programs alike. Kept as a literal
# (a test checks it against the installed distribution) because reading package metadata
# would cost a cold process tens of milliseconds.
PYBARS3_VERSION = "0.9.7"
VERSION_KEY = f"pybars3-{PYBARS3_VERSION}/herald-engine-{ENGINE_VERSION}"
