"""Hostile environments that exhaust resources: memory, CPU, descriptors, output."""

import os
import sys


class MemoryBomb:
    def allocate(self, gigabytes: int) -> dict:
        block = bytearray(gigabytes * (1 << 30))
        return {"success": True, "data": len(block)}

    def grow(self) -> dict:
        hoard = []
        while True:
            hoard.append(bytearray(64 << 20))

    def ping(self) -> dict:
        return {"success": True, "data": "alive"}


class CpuLoop:
    def spin(self) -> dict:
        while True:
            pass

    def spin_stubbornly(self) -> dict:
        while True:
            try:
                while True:
                    pass
            except BaseException:  # noqa: S110 - swallowing everything is the point
                continue

    def quick(self) -> dict:
        return {"success": True}


class FdExhaustion:
    def __init__(self):
        self._hoard = []

    def exhaust(self) -> dict:
        try:
            while True:
                self._hoard.append(open(os.devnull))
        except OSError as exc:
            return {"success": False, "error": str(exc), "data": len(self._hoard)}

    def ping(self) -> dict:
        return {"success": True, "data": len(self._hoard)}


class GiantOutput:
    def result(self, megabytes: int) -> dict:
        return {"success": True, "data": "x" * (megabytes << 20)}

    def flood_streams(self, megabytes: int) -> dict:
        line = "y" * 1023 + "\n"
        for _ in range(megabytes * 1024):
            print(line, end="")
            sys.stderr.write(line)
        chunk = b"z" * (1 << 20)
        for _ in range(megabytes):
            os.write(1, chunk)
            os.write(2, chunk)
        return {"success": True, "data": "flooded"}

    def deep_result(self, depth: int) -> dict:
        value = []
        for _ in range(depth):
            value = [value]
        return {"success": True, "data": value}

    def huge_int(self) -> dict:
        return {"success": True, "data": 10**5000}
