"""Kill a process's docker sandboxes when it dies: the guard behind the docker backend.

A `docker run` client killed outright leaves its container running (one busy in a tool call
never sees the end of its input). One guard process per parent holds the read end of a pipe
whose write end only the parent holds; the parent writes "+NAME" when it starts a container
and "-NAME" when that container is gone. At end of file (the parent exited, however it did)
the guard kills the containers still listed. Runs as `python -S guard.py DOCKER`.
"""

from __future__ import annotations

import subprocess
import sys


def main(docker: str) -> None:
    live: set[str] = set()
    for line in sys.stdin.buffer:
        name = line.strip().decode("ascii", "replace")
        if name.startswith("+"):
            live.add(name[1:])
        elif name.startswith("-"):
            live.discard(name[1:])
    if live:
        subprocess.run(
            [docker, "kill", *sorted(live)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )


if __name__ == "__main__":
    main(sys.argv[1])
