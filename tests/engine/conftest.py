from tests.channels.conftest import ca, ca_file, receiver  # noqa: F401
