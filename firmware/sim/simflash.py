# The virtual board's flash: an image file on the host, laid out as a cribboard image lays out a
# board's flash (MicroPython unix port; never deployed). The file system (littlefs2) has the
# region from the first block up to the rings; the rings (cribfw/ring.py, cribboot.py) take
# the last RESERVED_BLOCKS. The image behaves as NOR flash does: an erase sets a block to 0xFF, a
# program can only clear bits, and both take time (an erase about 4 ms, a tenth of a real chip's;
# a 256-byte page 0.25 ms, a third of one), in steps, so a cut in the middle of either leaves what
# a board would, and a save pauses the firmware as it does on a board.
import os
import time

import vfs
from simlink import link

BLOCK_SIZE = 4096
_ERASE = 6
_CHUNK = 256  # the program/erase scratch buffer: small, the firmware shares the heap
_PAGE_US = 250  # time to program one 256-byte page
_ERASE_STEP_US = 250  # time to erase 256 bytes of a block
_scratch = bytearray(_CHUNK)
_erased = b"\xff" * _CHUNK
_STEP = 64  # littlefs programs multiples of its program size (64), the rings of 256
_views = [memoryview(_scratch)[:n] for n in range(0, _CHUNK + 1, _STEP)]


class FlashImage:
    """A MicroPython block device (extended protocol) over blocks first..first+count-1 of an
    open image file."""

    def __init__(self, image, first=0, count=None, block_size=BLOCK_SIZE):
        self._image = image
        self._block_size = block_size
        self._first = first
        if count is None:
            image.seek(0, 2)
            count = image.tell() // block_size - first
        self.block_count = count

    def readblocks(self, block_num, buf, offset=0):
        self._image.seek((self._first + block_num) * self._block_size + offset)
        self._image.readinto(buf)

    def writeblocks(self, block_num, buf, offset=None):
        if offset is None:  # the simple protocol: erase, then program
            self.ioctl(_ERASE, block_num)
            offset = 0
        # NOR: a program clears bits, never sets them. In chunks through one small buffer,
        # allocating nothing: a file closed by a soft reset's collection is written from a
        # finaliser, with the heap locked.
        at = (self._first + block_num) * self._block_size + offset
        done = 0
        n = len(buf)
        steps = (n + _CHUNK - 1) // _CHUNK
        while done < n:
            link.flash_point(b"program", self._first + block_num, done // _CHUNK, steps)
            size = min(_CHUNK, n - done)
            view = _views[size // _STEP] if size % _STEP == 0 else memoryview(_scratch)[:size]
            self._image.seek(at + done)
            self._image.readinto(view)
            for i in range(size):
                view[i] &= buf[done + i]
            self._image.seek(at + done)
            self._image.write(view)
            time.sleep_us(_PAGE_US)
            done += size
        link.flash_point(b"program", self._first + block_num, steps, steps)

    def ioctl(self, op, arg):
        if op == 3:  # sync
            self._image.flush()
            return 0
        if op == 4:  # block count
            return self.block_count
        if op == 5:  # block size
            return self._block_size
        if op == _ERASE:
            self._image.seek((self._first + arg) * self._block_size)
            steps = self._block_size // _CHUNK
            for step in range(steps):
                link.flash_point(b"erase", self._first + arg, step, steps)
                self._image.write(_erased)
                time.sleep_us(_ERASE_STEP_US)
            link.flash_point(b"erase", self._first + arg, steps, steps)
            return 0
        return 0  # init, deinit


def mount(image_path, boot):
    """Lay out the flash for `boot` (a cribboot.Boot; cribboot.lay_out) in place of the host's
    file system. Without a boot (a firmware without cribboot: stock MicroPython's boot) the file
    system has the whole image and is formatted only when it cannot be mounted."""
    image = open(image_path, "r+b")
    vfs.umount("/")
    whole = FlashImage(image)
    if boot is None:
        _littlefs(whole)
        return
    import cribboot

    def region(first, count):
        return FlashImage(image, first, count)

    cribboot.lay_out(boot, whole.block_count, region)


def _littlefs(device):
    try:
        root = vfs.VfsLfs2(device)
    except OSError:
        vfs.VfsLfs2.mkfs(device)
        root = vfs.VfsLfs2(device)
    vfs.mount(root, "/")
    os.chdir("/")


def mount_rom(firmware_dir):
    """The firmware a cribboard image holds frozen, read-only at /rom (the virtual board's stand-in
    for frozen modules; a board lists no such folder)."""
    if firmware_dir:
        vfs.mount(vfs.VfsPosix(firmware_dir), "/rom", readonly=True)
