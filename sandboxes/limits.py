"""Resource limits of one sandboxed episode, and what the worker must apply of them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from sandboxes.errors import SandboxError

MB = 1024 * 1024
# The one size people change: how large a state or a tool's result may be, as one message
# between the host and the worker, in MB (decimal: 16 is 16,000,000 bytes). The default holds
# the databases people's environments keep (tau2-bench's retail and airline, 1.3-3.4 MB of
# JSON, with room); a larger database needs a larger value, set for the whole machine's
# builds, evals and `env run`s. An episode's outputs together may be four times as large.
MESSAGE_MB_VARIABLE = "ENVFOUNDRY_SANDBOX_MESSAGE_MB"
DEFAULT_MESSAGE_MB = 16
OUTPUT_MESSAGES = 4


def message_mb(environ: Mapping[str, str] | None = None) -> int:
    """The message limit in MB: ENVFOUNDRY_SANDBOX_MESSAGE_MB, else 16. A value that is not
    a whole number from 1 to 1024 is a SandboxError naming the variable."""
    raw = (os.environ if environ is None else environ).get(MESSAGE_MB_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_MESSAGE_MB
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= 1024:
        raise SandboxError(
            f"{MESSAGE_MB_VARIABLE}={raw!r}: the sandbox message limit is a whole number of MB "
            "from 1 to 1024"
        )
    return value


def _message_bytes() -> int:
    return message_mb() * 1_000_000


def _output_bytes() -> int:
    return OUTPUT_MESSAGES * _message_bytes()


@dataclass(frozen=True)
class Limits:
    """Per-episode limits. Sizes in MB unless named *_bytes; times in seconds."""

    call_timeout_s: float = 5.0
    address_space_mb: int = 1024
    cpu_s: int = 30
    open_files: int = 64
    file_size_mb: int = 16
    processes: int = 64
    # A state goes in and out of the worker as one message, and so does a result: the
    # machine's setting (MESSAGE_MB_VARIABLE) when none is given.
    max_message_bytes: int = field(default_factory=_message_bytes)
    max_total_output_bytes: int = field(default_factory=_output_bytes)
    tmp_size_mb: int = 16
    # Spawn plus loading the environment (imports, constructor, state) gets its own deadline.
    start_timeout_s: float = 20.0

    def __post_init__(self) -> None:
        # Made per session when none are given (thousands per environment): fields, not
        # asdict, which deep-copies.
        for declared in fields(self):
            name, value = declared.name, getattr(self, declared.name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise SandboxError(f"Limits.{name} must be a positive number, got {value!r}")

    def for_worker(self, *, nproc: int | None) -> dict:
        """The rlimits the worker applies to itself before any environment code runs."""
        return {
            "address_space_bytes": self.address_space_mb * MB,
            "cpu_s": int(self.cpu_s),
            "open_files": int(self.open_files),
            "file_size_bytes": self.file_size_mb * MB,
            "nproc": nproc,
            "core_bytes": 0,
            "max_message_bytes": int(self.max_message_bytes),
            "max_total_output_bytes": int(self.max_total_output_bytes),
            "call_timeout_s": float(self.call_timeout_s),
        }


def processes_of_uid(uid: int) -> int:
    """How many tasks the kernel already counts against `uid` for RLIMIT_NPROC."""
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += int(_threads(entry.path))
        except (OSError, ValueError):
            continue
    return count


def _threads(proc_dir: str) -> str:
    with open(f"{proc_dir}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return line.split()[1]
    return "1"
