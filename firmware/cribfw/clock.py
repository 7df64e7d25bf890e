# Milliseconds (and microseconds) as MicroPython counts them (time.ticks_ms, time.ticks_us, which
# wrap: compare and add only through ticks_diff and ticks_add), with a CPython stand-in so the
# firmware logic runs in the host's tests too.
try:
    from time import sleep_us, ticks_add, ticks_diff, ticks_ms, ticks_us
except ImportError:  # CPython: plain milliseconds that never wrap
    import time as _time

    def sleep_us(us):  # type: ignore[misc]
        _time.sleep(us / 1_000_000)

    def ticks_ms():  # type: ignore[misc]
        return int(_time.monotonic() * 1000)

    def ticks_us():  # type: ignore[misc]
        return int(_time.monotonic() * 1_000_000)

    def ticks_diff(a, b):  # type: ignore[misc]
        return a - b

    def ticks_add(a, b):  # type: ignore[misc]
        return a + b
