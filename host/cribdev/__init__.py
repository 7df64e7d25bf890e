"""cribboard's development tools: the test suite's and the benchmarks' stand-ins, and the
README's pictures. They live beside the package in a clone and are never shipped in its wheel
(pyproject.toml packages only cribboard and cribcore); they need the test extras
(`pip install -e '.[test]'`, `make test`).

- :mod:`cribdev.fakebluez`: a fake BlueZ on a private D-Bus (dbus-fast) that unmodified bleak
  talks to, reaching the firmware on real stacks (the Bluetooth LE tests and benchmark).
- :mod:`cribdev.simtable`: simulated club-hall tables, a table client without a board (the
  hall's tests and benchmarks).
- :mod:`cribdev.screenshots`: the README's pictures (`make screenshots`; Pillow, Chromium).
"""
