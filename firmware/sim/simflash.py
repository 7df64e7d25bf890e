# The virtual board's flash: a littlefs2 file system in an image file on the host
# (MicroPython unix port; never deployed).
import os

import vfs

BLOCK_SIZE = 4096
_DIR = 0x4000


class FileBlockDevice:
    """MicroPython block device (extended protocol) backed by an open image file."""

    def __init__(self, image, block_size=BLOCK_SIZE):
        self._image = image
        self._block_size = block_size
        image.seek(0, 2)
        self.block_count = image.tell() // block_size

    def readblocks(self, block_num, buf, offset=0):
        self._image.seek(block_num * self._block_size + offset)
        self._image.readinto(buf)

    def writeblocks(self, block_num, buf, offset=None):
        # offset None is the simple protocol (erase + write); a file needs no erase.
        self._image.seek(block_num * self._block_size + (offset or 0))
        self._image.write(buf)

    def ioctl(self, op, arg):
        if op == 3:  # sync
            self._image.flush()
            return 0
        if op == 4:  # block count
            return self.block_count
        if op == 5:  # block size
            return self._block_size
        return 0  # init, deinit, erase: nothing to do for a file


def mount(image_path, firmware_dir):
    """Mount the image at / (formatting it if it holds no file system) in place of the host
    file system; on a fresh image copy the firmware tree into it. Returns True if fresh."""
    device = FileBlockDevice(open(image_path, "r+b"))
    fresh = False
    try:
        flash = vfs.VfsLfs2(device)
    except OSError:
        vfs.VfsLfs2.mkfs(device)
        flash = vfs.VfsLfs2(device)
        fresh = True
    vfs.umount("/")
    vfs.mount(flash, "/")
    if fresh and firmware_dir:
        _copy_firmware(firmware_dir)
    os.chdir("/")
    return fresh


def _copy_firmware(firmware_dir):
    source_root = "/_firmware_source"
    try:
        vfs.mount(vfs.VfsPosix(firmware_dir), source_root)
    except OSError as err:
        print("simflash: cannot read firmware from", firmware_dir, err)
        return
    try:
        _copy_tree(source_root, "", True, bytearray(1024))
    finally:
        vfs.umount(source_root)


def _copy_tree(source, target, top, chunk):
    for entry in os.ilistdir(source):
        name = entry[0]
        if name == "__pycache__" or name.startswith(".") or (top and name == "sim"):
            continue
        source_path = source + "/" + name
        target_path = target + "/" + name
        if entry[1] == _DIR:
            try:
                os.mkdir(target_path)
            except OSError:
                pass
            _copy_tree(source_path, target_path, False, chunk)
        else:
            with open(source_path, "rb") as src, open(target_path, "wb") as dst:
                while True:
                    n = src.readinto(chunk)
                    if not n:
                        break
                    dst.write(memoryview(chunk)[:n])
