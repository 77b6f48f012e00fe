"""The parent's end of the worker pipes: JSON lines with deadlines and size caps on every read.

Nothing the worker writes is trusted. A read never blocks past its deadline, a line longer
than the message cap is never buffered whole, and anything that is not exactly the expected
reply (bad JSON, a wrong id, bytes after the last expected line) is a protocol violation, after
which the worker is killed. Never pickle: decoding must not be able to run code.
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

import orjson

_SPIN_S = 50e-6
# Environment results are JSON by contract; keys are stringified the way json.dumps would.
_DUMPS_OPTIONS = orjson.OPT_NON_STR_KEYS


class ChannelError(Exception):
    """The worker broke the protocol or a limit; `status` is what the session becomes."""

    status = "killed"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WorkerTimeout(ChannelError):
    pass


class OversizedMessage(ChannelError):
    pass


class OutputLimitExceeded(ChannelError):
    pass


class ProtocolViolation(ChannelError):
    pass


class WorkerExited(ChannelError):
    """End of file: the worker died (or closed its pipe) on its own."""

    status = "error"


def encode(message: dict[str, Any]) -> bytes:
    return orjson.dumps(message, option=_DUMPS_OPTIONS) + b"\n"


def fragment(value: Any) -> orjson.Fragment:
    """`value` encoded now and embedded as is later: big states are checked and encoded once."""
    return orjson.Fragment(orjson.dumps(value, option=_DUMPS_OPTIONS))


class Channel:
    def __init__(
        self, write_fd: int, read_fd: int, *, max_message_bytes: int, max_total_output_bytes: int
    ) -> None:
        self._write_fd = write_fd
        self._read_fd = read_fd
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        self._readable = select.poll()
        self._readable.register(read_fd, select.POLLIN)
        self._writable = select.poll()
        self._writable.register(write_fd, select.POLLOUT)
        self._buffer = bytearray()
        # Lines before _start are consumed; _scan is where the newline search resumes.
        self._start = 0
        self._scan = 0
        self.max_message_bytes = max_message_bytes
        self.max_total_output_bytes = max_total_output_bytes
        # The worker keeps successful results within max_total_output_bytes; the session widens
        # this limit by a fixed allowance per call for error replies.
        self.output_limit = max_total_output_bytes
        self.total_output_bytes = 0

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._write_fd, view) :]
            except BlockingIOError:
                # A worker that stops reading must not block us: wait for room, with a deadline.
                if not self._writable.poll(_millis(deadline)):
                    raise WorkerTimeout("worker stopped reading its input") from None
            except (BrokenPipeError, ConnectionResetError):
                raise WorkerExited("worker exited (its input pipe is closed)") from None

    def receive(self, deadline: float, *, count_output: bool = False) -> dict[str, Any]:
        """The next line as a JSON object; tool replies count toward the output limit."""
        line = self._read_line(deadline)
        if count_output:
            self.total_output_bytes += len(line) + 1
            if self.total_output_bytes > self.output_limit:
                raise OutputLimitExceeded(
                    f"tools returned more than {self.max_total_output_bytes} bytes in total"
                )
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ProtocolViolation(f"undecodable reply ({exc})") from None
        if not isinstance(message, dict):
            raise ProtocolViolation(f"reply is a {type(message).__name__}, not an object")
        return message

    def expect_drained(self) -> None:
        """After the last expected reply nothing may follow (e.g. a forged extra response)."""
        if len(self._buffer) > self._start:
            raise ProtocolViolation("unexpected data after the reply")

    def _spin_read(self) -> bool:
        """Read for up to _SPIN_S without sleeping; True if data came (or the pipe closed).

        A reply usually comes within ~10 us. Sleeping in poll() instead costs a wake-up that
        on a VM takes tens of microseconds (a raw pipe ping-pong here: 44 us sleeping, 3 us
        spinning). Yielding in the loop lets a worker that shares our CPU run meanwhile.
        """
        stop = time.perf_counter() + _SPIN_S
        while True:
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except BlockingIOError:
                if time.perf_counter() > stop:
                    return False
                os.sched_yield()
                continue
            if not chunk:
                return False  # end of file: the blocking path below reports it
            self._append(chunk)
            return True

    def _read_line(self, deadline: float) -> bytearray:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\n", self._scan)
            if end >= 0:
                line = buffer[self._start : end]
                self._start = self._scan = end + 1
                if self._start == len(buffer):
                    buffer.clear()
                    self._start = self._scan = 0
                return line
            self._scan = len(buffer)
            if self._scan - self._start > self.max_message_bytes:
                raise OversizedMessage(
                    f"reply larger than the {self.max_message_bytes} byte message limit "
                    "(ENVFOUNDRY_SANDBOX_MESSAGE_MB raises it)"
                )
            if self._spin_read():
                continue
            if not self._readable.poll(_millis(deadline)):
                if time.monotonic() >= deadline:
                    raise WorkerTimeout("no reply before the deadline")
                continue
            try:
                chunk = os.read(self._read_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise WorkerExited("worker exited")
            self._append(chunk)

    def _append(self, chunk: bytes) -> None:
        if self._start:
            # Consumed lines are dropped only when more data comes in, never per line.
            del self._buffer[: self._start]
            self._scan -= self._start
            self._start = 0
        self._buffer += chunk


def _millis(deadline: float) -> int:
    # poll() takes whole milliseconds; rounding up keeps us from spinning just before a deadline.
    return max(0, int((deadline - time.monotonic()) * 1000) + 1)
