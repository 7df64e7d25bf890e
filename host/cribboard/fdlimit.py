"""How many files a process may hold open: as many as the system lets it.

A server that strangers can connect to runs out of descriptors at the common soft limit of
1024 long before the machine does: a thousand idle connections would stop it. `hall start`,
`hall page` and the hall's broker (which inherits it) raise the soft limit to the hard one."""

from __future__ import annotations

import contextlib
import sys

CEILING = 1 << 20  # far above anything a hall needs; the kernel's own ceiling on Linux
MACOS_CEILING = 10240  # OPEN_MAX: macOS refuses a higher soft limit whatever the hard one


def fd_limit() -> int:
    """The soft limit on open files now (a large number where there is none)."""
    try:
        import resource
    except ImportError:  # not a POSIX system
        return CEILING
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return CEILING if soft == resource.RLIM_INFINITY else min(int(soft), CEILING)


def raise_fd_limit() -> int:
    """Raise the soft limit on open files to the hard limit (the most an unprivileged process
    may have); returns the limit now. Children started later inherit it."""
    try:
        import resource
    except ImportError:
        return CEILING
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = MACOS_CEILING if sys.platform == "darwin" else CEILING
    wanted = ceiling if hard == resource.RLIM_INFINITY else min(int(hard), ceiling)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return fd_limit()
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return fd_limit()
