"""The fan-out floor: how fast a bare smtplib client can hand one prebuilt message to the
bench's SMTP server over the same number of connections (no rendering, no MIME, no DB)."""

from __future__ import annotations

import smtplib
import sys
import threading
import time

MESSAGE = (b"From: a@example.com\r\nTo: b@example.net\r\nSubject: floor\r\n"
           b"Content-Type: text/plain\r\n\r\n" + (b"x" * 76 + b"\r\n") * 26)


def main() -> None:
    port, total, connections = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    host = sys.argv[4] if len(sys.argv) > 4 else "127.0.0.1"  # bench.scale: the data host

    failures: list[BaseException] = []

    def run(count: int) -> None:
        try:
            client = smtplib.SMTP(host, port)
            for _ in range(count):
                client.sendmail("a@example.com", ["b@example.net"], MESSAGE)
            client.quit()
        except (OSError, smtplib.SMTPException) as err:
            failures.append(err)

    threads = [threading.Thread(target=run, args=(total // connections,))
               for _ in range(connections)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"smtp floor failed: {failures[0]!r}")
    print(total / elapsed)


if __name__ == "__main__":
    main()
