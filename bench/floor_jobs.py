"""The no-op job whose throughput is the floor for the delivery figures."""


def noop(value: str) -> str:
    return value
