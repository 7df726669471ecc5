from tests.channels.conftest import ca, ca_file, dns_server, receiver  # noqa: F401
from tests.senders.conftest import senders_cli  # noqa: F401
