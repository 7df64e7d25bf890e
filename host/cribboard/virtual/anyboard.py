"""What either kind of virtual board offers a test: one spelling for both.

:class:`~cribboard.virtual.VirtualBoard` (the firmware on MicroPython's unix port) and
:class:`~cribboard.virtual.rp2board.RP2Board` (a Pico image on the emulated RP2040) each
implement :class:`AnyVirtualBoard`, so a test that presses buttons, reads the LEDs, cuts the
power or stops a save at a flash operation is written once and runs on both
(tests/virtual/test_any_virtual_board.py). What only one of them can do stays its own: the unix board's
flash points within an operation (:meth:`VirtualControl.break_at_flash_point`), its heap report
and its Bluetooth radio; the emulated chip's clock, cycle-exact halts, power cuts at a cycle,
traces and profiles.

Times: the unix board's are the host's (a press of 80 ms lasts 80 ms from when the firmware
first reads the pin); the emulated chip's presses are in emulated time, its timeouts in wall
seconds (it runs slower than a Pico on a busy machine).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .control import FlashStop, FramePredicate

if TYPE_CHECKING:
    from .launcher import VirtualBoard
    from .rp2board import RP2Board


@runtime_checkable
class AnyVirtualBoard(Protocol):
    """A running virtual board: its port, buttons, LEDs, power, reset and flash breaks."""

    @property
    def port(self) -> str:
        """The serial device hosts open (a pty such as /dev/pts/7)."""
        ...

    def press(self, pin: int, ms: int = 80) -> None:
        """Press the button on GPIO `pin` (to ground) for `ms` milliseconds; returns at once."""
        ...

    def hold(self, pin: int) -> None:
        """Hold the button on GPIO `pin` down until :meth:`release`, across resets too."""
        ...

    def release(self, pin: int) -> None:
        """Release the button on GPIO `pin`."""
        ...

    def frame(self) -> bytes:
        """The latest whole LED frame, RGB, 3 bytes per LED (NoFrameError before the first)."""
        ...

    def wait_frame(self, predicate: FramePredicate | None = None, timeout: float = 5.0) -> bytes:
        """The current LED frame, or the first to come, for which `predicate` is true
        (TimeoutError after `timeout` seconds)."""
        ...

    def power_cut(self) -> object:
        """Cut the power where the board is: RAM is lost, the flash keeps what was written up
        to the cut. Nothing runs until :meth:`power_on`. (What it returns is the board's own:
        the emulated chip's account of the cut, nothing on the unix board.)"""
        ...

    def power_on(self) -> None:
        """Power the board on after :meth:`power_cut`: it boots from its flash."""
        ...

    def reset(self) -> None:
        """Hard-reset the board, as its reset button does: it boots from its flash again."""
        ...

    def break_on_flash(self, kind: str = "any", count: int = 1) -> None:
        """Stop the board at the start of its `count`-th flash operation of `kind` (``erase``,
        ``program`` or ``any``) from now, before the operation changes a byte. Stopped, the
        board does nothing else until :meth:`resume`, a power cut or a reset."""
        ...

    def wait_flash_stop(self, timeout: float = 30.0) -> FlashStop:
        """The flash operation the board stopped at after :meth:`break_on_flash`."""
        ...

    def resume(self) -> None:
        """Let a board stopped at a flash break run on."""
        ...


if TYPE_CHECKING:

    def _both_kinds_are_any_virtual_board(
        unix: VirtualBoard, emulated: RP2Board
    ) -> tuple[AnyVirtualBoard, AnyVirtualBoard]:
        """Never called: mypy checks here that both classes implement the interface."""
        return unix, emulated
