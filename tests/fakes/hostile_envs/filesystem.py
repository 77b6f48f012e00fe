"""Hostile environments that read secrets or write outside the workspace."""

import os


def _attempt(action):
    try:
        return {"ok": True, "value": action()}
    except OSError as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


class ReadShadow:
    def read(self) -> dict:
        with open("/etc/shadow") as handle:
            return {"success": True, "data": handle.read()}


class ReadRootHome:
    def read(self) -> dict:
        found = {}
        for current, _, files in os.walk("/root"):
            if "/.pyenv" in current:
                continue
            for name in files:
                path = os.path.join(current, name)
                found[path] = _attempt(lambda p=path: open(p, "rb").read(200).hex())
        return {"success": True, "data": {"listing": sorted(os.listdir("/root")), "files": found}}


class ReadProcEnviron:
    def read(self, pid: int = 1) -> dict:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return {"success": True, "data": handle.read().decode("utf-8", "replace")}


class HarvestEnvironment:
    """Everything a process could learn about its own and other processes' environments."""

    def harvest(self) -> dict:
        seen = {"environ": dict(os.environ), "proc": {}}
        for entry in os.listdir("/proc"):
            if entry.isdigit() or entry == "self":
                for leaf in ("environ", "cmdline"):
                    outcome = _attempt(
                        lambda p=f"/proc/{entry}/{leaf}": (
                            open(p, "rb").read().decode("utf-8", "replace")
                        )
                    )
                    seen["proc"][f"{entry}/{leaf}"] = outcome
        return {"success": True, "data": seen}


class WriteOutside:
    def write(self, marker: str) -> dict:
        targets = [
            f"/usr/{marker}",
            f"/etc/{marker}",
            f"/root/{marker}",
            f"/{marker}",
            f"/workspace/../{marker}",
            f"/proc/{marker}",
            f"/dev/{marker}",
            f"/sys/{marker}",
            f"/sbx/{marker}",
            f"/sbx/inside/{marker}",
        ]
        outcomes = {}
        for path in targets:

            def write(p=path):
                with open(p, "w") as handle:
                    handle.write("pwned")
                return p

            outcomes[path] = _attempt(write)
        written = [path for path, outcome in outcomes.items() if outcome["ok"]]
        return {"success": True, "data": {"written": written, "outcomes": outcomes}}

    def write_path(self, path: str) -> dict:
        with open(path, "w") as handle:
            handle.write("pwned")
        return {"success": True, "data": path}


class TmpWriter:
    def write(self, marker: str) -> dict:
        with open(f"/tmp/{marker}", "w") as handle:
            handle.write("private tmp")
        return {"success": True, "data": sorted(os.listdir("/tmp"))}


class FillTmp:
    def fill(self) -> dict:
        chunk = b"\0" * (1 << 20)
        written = 0
        try:
            with open("/tmp/fill", "wb") as handle:
                while written < (1 << 30):
                    handle.write(chunk)
                    handle.flush()
                    written += len(chunk)
        except OSError as exc:
            return {"success": False, "error": f"{type(exc).__name__}: {exc}", "data": written}
        return {"success": True, "data": written}


class BigFile:
    def write(self, megabytes: int) -> dict:
        chunk = b"\0" * (1 << 20)
        with open("big.bin", "wb") as handle:
            for _ in range(megabytes):
                handle.write(chunk)
        return {"success": True}


class SymlinkPlanter:
    """Plants links in the workspace, hoping the parent follows them (it must not)."""

    def plant(self, target: str) -> dict:
        os.symlink(target, "link")
        outcomes = {
            "write_through": _attempt(lambda: open("link", "w").write("pwned")),
            "read_through": _attempt(lambda: open("link").read()),
        }
        return {"success": True, "data": outcomes}

    def plant_dir(self, target: str) -> dict:
        os.symlink(target, "dirlink")
        return {"success": True, "data": _attempt(lambda: os.listdir("dirlink"))}


class DeviceAccess:
    def probe(self) -> dict:
        outcomes = {
            path: _attempt(lambda p=path: open(p, "rb").read(16).hex())
            for path in (
                "/dev/mem",
                "/dev/kmem",
                "/dev/port",
                "/dev/sda",
                "/dev/vda",
                "/proc/kcore",
                "/proc/1/mem",
                "/sys/kernel/notes",
            )
        }
        return {"success": True, "data": {"dev": sorted(os.listdir("/dev")), "outcomes": outcomes}}
