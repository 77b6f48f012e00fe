"""A seccomp filter (classic BPF, built here without libseccomp) for bubblewrap's --seccomp.

Denies what an unprivileged sandboxed process could still use to widen its reach: new
namespaces (an unprivileged user namespace gives a process every capability inside it),
ptrace and cross-process memory access, kernel keyrings, BPF, io_uring (its operations bypass
seccomp), userfaultfd, perf events and the mount API. Syscalls of a foreign ABI (i386 via
int 0x80, x32) are refused outright, since their numbers would not match this list.
"""

from __future__ import annotations

import errno
import platform
import struct

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_X32_SYSCALL_BIT = 0x40000000
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
_CLONE_NAMESPACE_FLAGS = (
    0x00020000
    | 0x02000000
    | 0x04000000
    | 0x08000000
    | 0x10000000
    | 0x20000000
    | 0x40000000
    | 0x00000080
)

_DENIED = (
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "userfaultfd",
    "perf_event_open",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_by_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
)

_ARCHES = {
    "x86_64": (
        0xC000003E,
        {
            "clone": 56,
            "clone3": 435,
            "unshare": 272,
            "setns": 308,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "bpf": 321,
            "userfaultfd": 323,
            "perf_event_open": 298,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "open_by_handle_at": 304,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "clone": 220,
            "clone3": 435,
            "unshare": 97,
            "setns": 268,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "bpf": 280,
            "userfaultfd": 282,
            "perf_event_open": 241,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "open_by_handle_at": 265,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
        },
    ),
}


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _errno(number: int) -> int:
    return 0x00050000 | number


def filter_program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's native ABI, or None where we do not know its numbers."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        return None
    audit_arch, numbers = _ARCHES[machine]
    program = [
        _insn(_LD_W_ABS, 4),  # A = seccomp_data.arch
        _insn(_JEQ_K, audit_arch, jt=1, jf=0),
        _insn(_RET_K, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0),  # A = seccomp_data.nr
    ]
    if machine == "x86_64":
        program += [
            _insn(_JGE_K, _X32_SYSCALL_BIT, jt=0, jf=1),
            _insn(_RET_K, _errno(errno.ENOSYS)),
        ]
    for name in _DENIED:
        program += [_insn(_JEQ_K, numbers[name], jt=0, jf=1), _insn(_RET_K, _errno(errno.EPERM))]
    # clone3 passes its flags in memory a filter cannot read; ENOSYS makes libc fall back to clone.
    program += [_insn(_JEQ_K, numbers["clone3"], jt=0, jf=1), _insn(_RET_K, _errno(errno.ENOSYS))]
    program += [
        _insn(_JEQ_K, numbers["clone"], jt=0, jf=3),
        _insn(_LD_W_ABS, 16),  # A = low 32 bits of the flags argument
        _insn(_JSET_K, _CLONE_NAMESPACE_FLAGS, jt=0, jf=1),
        _insn(_RET_K, _errno(errno.EPERM)),
        _insn(_RET_K, _RET_ALLOW),
    ]
    return b"".join(program)
