from tests.channels.conftest import ca, ca_file, dns_server, receiver  # noqa: F401
