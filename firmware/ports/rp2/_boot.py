# Frozen into the cribboard rp2 images as `_boot.py`, in place of the port's own: MicroPython
# runs it first at every start, before boot.py and main.py. It mounts the flash's storage region
# as littlefs at "/", and formats it when it holds no file system yet (a fresh board).
import machine  # noqa: F401  (left imported, as by the port's own: the REPL has machine and rp2)
import rp2


def _mount():
    import vfs

    flash = rp2.Flash()  # the whole storage region, after the firmware
    try:
        root = vfs.VfsLfs2(flash, progsize=256)  # the flash programs in 256-byte pages
    except OSError:
        vfs.VfsLfs2.mkfs(flash, progsize=256)
        root = vfs.VfsLfs2(flash, progsize=256)
    vfs.mount(root, "/")


_mount()
del _mount
