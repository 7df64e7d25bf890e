# The flag an interrupt handler sets to wake a task (a pin's edge, a Bluetooth event): what
# asyncio.ThreadSafeFlag is, with its poll in C where the image has cribio's Flag. asyncio's
# wait polls every object it waits on whenever the core wakes (each USB frame, once a
# millisecond, and before each request is read); ThreadSafeFlag answers through a Python method,
# which cost every request about 2,400 cycles on an RP2040 before its reply.


class IrqFlag:
    """asyncio.ThreadSafeFlag's set(), clear() and wait() on `native`, a cribio.Flag; `io_queue`
    is asyncio's (asyncio.core._io_queue), which polls the flag while a task waits on it."""

    def __init__(self, native, io_queue):
        self.set = native.set  # (the native method itself: the interrupt handler calls it)
        self.clear = native.clear
        self._native = native
        self._io_queue = io_queue

    # (MicroPython's coroutines are generators: a yield in one is asyncio's own way to wait on
    # a stream, as in ThreadSafeFlag's wait, where CPython's type rules see an async generator.)
    async def wait(self) -> None:  # pyright: ignore[reportInvalidTypeForm]
        """Until the flag is set (now or later); clears it, as ThreadSafeFlag's wait does."""
        native = self._native
        if not native.is_set():
            yield self._io_queue.queue_read(native)  # pyright: ignore[reportReturnType]
        native.clear()


def irq_flag(asyncio, cribio, in_task):
    """The flag for a task woken from outside asyncio: an asyncio.Event where the handler runs
    inside a task (the virtual board), an IrqFlag on a cribboard image, else a ThreadSafeFlag."""
    if in_task:
        return asyncio.Event()
    native = getattr(cribio, "Flag", None)
    if native is not None:
        return IrqFlag(native(), asyncio.core._io_queue)
    return asyncio.ThreadSafeFlag()
