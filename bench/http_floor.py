"""The webhook floor: how fast a bare requests client, ``threads`` kept-alive sessions at once,
POSTs ``total`` small JSON bodies to the bench's HTTPS receiver (no signing, no database)."""

from __future__ import annotations

import sys
import threading
import time

import requests


def main() -> None:
    url, total, threads, ca = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    failures: list[BaseException] = []

    def run(count: int) -> None:
        try:
            with requests.Session() as session:
                for i in range(count):
                    answer = session.post(url, json={"order": i}, verify=ca, timeout=30)
                    answer.raise_for_status()
        except requests.RequestException as err:
            failures.append(err)

    workers = [threading.Thread(target=run, args=(total // threads,)) for _ in range(threads)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"http floor failed: {failures[0]!r}")
    print(total / elapsed)


if __name__ == "__main__":
    main()
