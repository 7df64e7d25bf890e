# Viper's buffer casts, for the plain twin of a viper function. The firmware's byte loops are
# viper code on a board (`@micropython.viper`: machine-word integers, raw buffer pointers); inside
# viper code `ptr8(buf)`, `ptr16(buf)` and `ptr32(buf)` are the compiler's own casts, whatever
# these names are bound to. The same source runs as plain Python under CPython, and on a
# MicroPython without a native emitter (the build leaves the decorators out there:
# host/cribboard/firmware_build.py): there these functions make the buffer its own view, and the
# loops index it as they are.
# tests/firmware/test_native_twins.py holds the two equal.


def ptr8(buf):
    """The buffer as bytes (a bytearray, bytes or str's buffer indexes as its bytes)."""
    return buf


def ptr16(buf):
    """The buffer as 16-bit numbers (an array of "h")."""
    return buf


def ptr32(buf):
    """The buffer as 32-bit numbers (an array of "i")."""
    return buf
