"""Emptying a directory from inside the sandbox: what a zygote does to the workspace and /tmp
after each forked child, and a warm worker to its workspace before its next episode.

By descriptor throughout: nothing that a symlink planted in the tree points to is ever
followed, changed or removed.
"""

import os


def empty(directory, mode=None):
    """Remove everything in `directory` (and set its mode), by descriptor: nothing that a
    symlink planted in it points to is ever followed, changed or removed."""
    try:
        handle = os.open(directory, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY)
    except OSError:
        return
    try:
        _empty_handle(handle, mode)
    finally:
        os.close(handle)


def _empty_handle(handle, mode):
    magic = f"/proc/self/fd/{handle}"
    try:
        # Children may have taken away our own right to list or change it; we own it.
        os.chmod(magic, 0o700 if mode is None else mode)
    except OSError:
        pass
    try:
        fd = os.open(magic, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        for entry in list(os.scandir(fd)):
            _remove_entry(fd, entry.name)
    finally:
        os.close(fd)


def _remove_entry(parent, name):
    try:
        os.unlink(name, dir_fd=parent)
        return
    except IsADirectoryError:
        pass  # Linux's unlink refuses directories with EISDIR
    except OSError:
        return
    try:
        handle = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY, dir_fd=parent)
    except OSError:
        return
    try:
        _empty_handle(handle, None)
    finally:
        os.close(handle)
    try:
        os.rmdir(name, dir_fd=parent)
    except OSError:
        pass
