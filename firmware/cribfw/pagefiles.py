# The table page's files as the board serves them, gzip-compressed by the host when it builds
# the firmware (`make mip` writes firmware/web/; cribdev/boardpage.py): the same page the bridge
# serves (host/cribboard/bridge/static), its board drawing, layout, protocol constants and
# translations. Three places hold them, looked for in this order:
#   /web/        on the flash, put there by `cribboard deploy` or mip
#   cribpage     a module frozen into a cribboard image (its bytes stay in the flash, not the heap)
#   /rom/web/    the virtual board's stand-in for what an image holds
# A folder has files.txt, one line per file: its URL path and its ETag, and each file as
# <path>.gz. The index is small and read once; a file's bytes are read in chunks as they are sent.

CHUNK = 512


class PageFiles:
    def __init__(self, entries, root=None):
        self.entries = entries  # [(path, etag, data or None)]: data None: read from root
        self.root = root

    def find(self, path):
        """(etag, size, data or None) of the file at URL `path` (bytes), or None."""
        for entry in self.entries:
            if entry[0] == path:
                data = entry[2]
                if data is not None:
                    return entry[1], len(data), data
                import os

                try:
                    size = os.stat(self._file(path))[6]
                except OSError:
                    return None
                return entry[1], size, None
        return None

    def _file(self, path):
        return self.root + path.decode() + ".gz"

    async def send(self, path, data, writer, conn):
        """Write a file's bytes (data, or read from the flash) to `writer`; `conn.stuck_ms`
        marks a write that has not finished, for the server's watch."""
        from cribfw.clock import ticks_ms

        if data is not None:
            view = memoryview(data)
            for at in range(0, len(data), CHUNK):
                conn.stuck_ms = ticks_ms() or 1
                writer.write(view[at : at + CHUNK])
                await writer.drain()
            conn.stuck_ms = 0
            return
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        with open(self._file(path), "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                conn.stuck_ms = ticks_ms() or 1
                writer.write(view[:n])
                await writer.drain()
        conn.stuck_ms = 0


def _from_folder(root):
    try:
        f = open(root + "/files.txt", "rb")
    except OSError:
        return None
    entries = []
    with f:
        for line in f:
            words = line.split()
            if len(words) == 2:
                entries.append((words[0], words[1], None))
    return PageFiles(entries, root)


def load():
    """The page's files from the first place that holds them, or None (a board without the page:
    its server still offers the set-up page)."""
    found = _from_folder("/web")
    if found is not None:
        return found
    try:
        import cribpage  # pyright: ignore[reportMissingImports] (made by the image's build)

        return PageFiles(list(cribpage.FILES))
    except ImportError:
        pass
    return _from_folder("/rom/web")
