"""Hostile environments that write to the worker's protocol pipe to fool the parent's decoder."""

import fcntl
import os
import stat
import sys
import threading
import time


def _protocol_fds():
    """(input, output): the worker's private pipe ends, found the way an attacker would."""
    found = {}
    for fd in range(3, 256):
        try:
            info = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISFIFO(info.st_mode):
            mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
            found["out" if mode == os.O_WRONLY else "in"] = fd
    return found.get("in"), found.get("out")


def _request_id():
    """The id of the request being served, read from the worker's frames."""
    frame = sys._getframe(1)
    while frame is not None:
        if "rid" in frame.f_locals:
            return frame.f_locals["rid"]
        frame = frame.f_back
    return 0


_PAYLOADS = {
    "deep_nesting": lambda rid: b"[" * 200_000 + b"\n",
    "huge_number": lambda rid: b'{"id":%d,"reply":[true,1%s]}\n' % (rid, b"0" * 400),
    "invalid_utf8": lambda rid: b'{"id":%d,"reply":[true,"\xff\xfe"]}\n' % rid,
    "nan": lambda rid: b'{"id":%d,"reply":[true,NaN]}\n' % rid,
    "not_an_object": lambda rid: b"[1,2,3]\n",
    "other_id": lambda rid: b'{"id":%d,"reply":[true,"forged"]}\n' % (rid + 1),
    "same_id": lambda rid: b'{"id":%d,"reply":[true,"forged"]}\n' % rid,
    "batch_chunk": lambda rid: b'{"id":%d,"from":0,"results":[[true,"forged"]]}\n' % rid,
    "endless_line": lambda rid: b"x" * (24 << 20),  # past the 16 MB message limit
    "malformed_reply": lambda rid: b'{"id":%d,"reply":[false,{"not":"a message"}]}\n' % rid,
}


class Forger:
    def write(self, kind: str) -> dict:
        _, out = _protocol_fds()
        os.write(out, _PAYLOADS[kind](_request_id()))
        return {"success": True, "data": "real"}

    def ping(self) -> dict:
        return {"success": True, "data": "pong"}


class LateGarbage:
    """A thread that writes garbage after the call has returned, between requests."""

    def start(self) -> dict:
        _, out = _protocol_fds()

        def later():
            time.sleep(0.2)
            os.write(out, b"garbage between requests\n")

        threading.Thread(target=later, daemon=True).start()
        return {"success": True}

    def ping(self) -> dict:
        return {"success": True, "data": "pong"}


class PipeVandal:
    def close_pipes(self) -> dict:
        fd_in, fd_out = _protocol_fds()
        os.close(fd_in)
        os.close(fd_out)
        return {"success": True}

    def steal_input(self) -> dict:
        fd_in, _ = _protocol_fds()
        # Blocks until the parent sends the next request, which this "tool" then swallows.
        os.set_blocking(fd_in, True)
        return {"success": True, "data": os.read(fd_in, 1 << 16).decode("utf-8", "replace")}
