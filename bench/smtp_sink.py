"""The SMTP server of bench.fairness in a process of its own (aiosmtpd): it keeps nothing
of the 1.4 GB a fan-out sends, and prints each message's recipient and its arrival time
(time.monotonic, one clock for every process of the machine), one line a message; a
server in the bench's own process would share its interpreter lock with the bench."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from tests.support.smtp_server import DsnController, Handler


class Arrivals(Handler):
    """Prints, does not keep; answers each message after ``delay`` seconds (a real relay's
    50-300 ms; many messages wait at once)."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.delay = delay

    async def handle_DATA(self, server, session, envelope):
        if self.delay:
            await asyncio.sleep(self.delay)
        line = f"{envelope.rcpt_tos[0]} {time.monotonic()}\n"
        with self.lock:
            sys.stdout.write(line)
            sys.stdout.flush()
        return "250 Message accepted"


def main() -> None:
    host = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"  # bench.scale: a namespace's
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0  # seconds a message
    controller = DsnController(Arrivals(delay), hostname=host, port=int(sys.argv[1]),
                               decode_data=False, server_hostname="localhost",
                               enable_SMTPUTF8=True)
    controller.start()
    print("ready", flush=True)
    try:
        sys.stdin.read()  # until the bench closes our stdin
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
