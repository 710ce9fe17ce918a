"""Limits for the processes that run a user's SPARQL (forked children: a public query, see
:mod:`.worker` and :mod:`.pool`; the check of an authenticated update, see :mod:`.preflight`),
and their life.

* **No network**: a seccomp filter makes ``socket()`` fail with EPERM for every address family
  except AF_UNIX, so even a ``SERVICE`` clause that got past :mod:`.guard` cannot fetch a URL.
* **Memory**: the address space may grow by a bounded amount only; a query that needs more fails
  in the child (which dies) instead of starving the service.
* **CPU priority**: the child runs niced, so the REST pipeline keeps its share of the cores.

Everything here is Linux-specific and best effort elsewhere (a warning is logged once).

:func:`enter` puts a fresh child under all of these at once; :data:`FORK_LOCK` is held from a
pipe's creation to the fork and the parent's close of the child's end, so that no child inherits
another child's write end (its reader would wait for that child too); :func:`reap` kills and
collects a child. :func:`send` and :func:`read_message` talk to a child that lives on.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import logging
import os
import platform
import resource
import select
import signal
import stat
import struct
import threading
import time
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)

# seccomp constants (linux/seccomp.h, linux/filter.h, linux/audit.h)
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EPERM = 1
_AF_UNIX = 1
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_RET_K = 0x06
# machine → (audit arch, socket syscall number)
_ARCH = {
    "x86_64": (0xC000003E, 41),
    "aarch64": (0xC00000B7, 198),
}


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _program(arch: int, nr_socket: int) -> bytes:
    def ins(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("HBBI", code, jt, jf, k)

    return b"".join([
        ins(_BPF_LD_W_ABS, 0, 0, 4),                   # A = seccomp_data.arch
        ins(_BPF_JEQ_K, 1, 0, arch),                   # our arch? skip the next
        ins(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),  # foreign ABI: refuse
        ins(_BPF_LD_W_ABS, 0, 0, 0),                   # A = seccomp_data.nr
        ins(_BPF_JEQ_K, 0, 3, nr_socket),              # socket()? else allow
        ins(_BPF_LD_W_ABS, 0, 0, 16),                  # A = args[0] (address family)
        ins(_BPF_JEQ_K, 1, 0, _AF_UNIX),               # AF_UNIX is allowed
        ins(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM),
        ins(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
    ])


def deny_network() -> bool:
    """Forbid new network sockets in this process for good. True when the filter is in place."""
    spec = _ARCH.get(platform.machine())
    if spec is None or not hasattr(ctypes, "CDLL"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prog = _program(*spec)
        buf = ctypes.create_string_buffer(prog, len(prog))
        fprog = _SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return bool(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def network_filter_supported() -> bool:
    return platform.system() == "Linux" and platform.machine() in _ARCH


def _vm_size() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def limit_memory(extra_bytes: int) -> None:
    """Let the address space grow by at most ``extra_bytes`` from now on."""
    size = _vm_size()
    if size and extra_bytes > 0:
        cap = size + extra_bytes
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        except (ValueError, OSError):
            pass


def lower_priority(increment: int = 10) -> None:
    try:
        os.nice(increment)
    except OSError:
        pass


_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """SIGKILL this process when the thread that forked it ends (e.g. the service is killed)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(70)


#: held around pipe + fork + close of the write end by every parent that forks a child here
FORK_LOCK = threading.Lock()


def _close_fds(which: Callable[[int, int], bool]) -> None:
    """Close this process's descriptors ``fd`` for which ``which(fd, st_mode)`` holds."""
    try:
        fds = [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:
        return
    for fd in fds:
        try:
            if which(fd, os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:
            pass


def close_sockets() -> None:
    """Drop the child's copies of the service's sockets, so closing them in the parent works."""
    _close_fds(lambda _, mode: stat.S_ISSOCK(mode))


def close_pipes(keep: Iterable[int]) -> None:
    """Drop the child's copies of pipes other than ``keep`` and the standard streams: a
    long-lived child (:mod:`.pool`) must not hold other children's pipes open."""
    kept = {0, 1, 2, *keep}
    _close_fds(lambda fd, mode: fd not in kept and stat.S_ISFIFO(mode))


def how_it_ended(status: int) -> str:
    """A child's wait status in words: ``signal 11`` or ``exit 70``."""
    return (f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
            else f"exit {os.WEXITSTATUS(status)}")


def enter(parent_pid: int, memory_bytes: int) -> None:  # pragma: no cover - child
    """Everything above, in a child just forked from ``parent_pid``: dies with it, no fault
    report of its own (a crash is expected and the parent reports it), none of the service's
    sockets, no network, ``memory_bytes`` more address space at most, a lower priority."""
    die_with_parent(parent_pid)
    faulthandler.disable()
    close_sockets()
    deny_network()
    limit_memory(memory_bytes)
    lower_priority()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def spawn(child: Callable[[int], None]) -> tuple[int, int]:
    """Fork a child that runs ``child(write_fd)`` (it must end with ``os._exit``); returns the
    child's pid and the read end of its pipe. Pipe, fork and closing the write end happen under
    :data:`FORK_LOCK`, so no child inherits another's write end."""
    with FORK_LOCK:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(r)
            child(w)
            os._exit(70)   # child() returned: never run on in the server's code
        os.close(w)
    return pid, r


def read_report(r: int, timeout: float, limit: int) -> tuple[bytes, str]:
    """What a child writes to ``r`` until it closes it: ``(data, "done")``, ``(data, "late")``
    when ``timeout`` seconds pass first, ``(data, "large")`` once more than ``limit`` bytes
    came."""
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    poller = select.poll()  # not select(): descriptors above 1023 are normal in a server
    poller.register(r, select.POLLIN | select.POLLHUP | select.POLLERR)
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(max(1, int(left * 1000))):
            return b"".join(chunks), "late"
        chunk = os.read(r, 1 << 16)
        if not chunk:
            return b"".join(chunks), "done"
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), "large"


def _length(head_line: bytes) -> int:
    """The body length a report's head announces (0 for an error or a broken head)."""
    try:
        head = json.loads(head_line)
    except ValueError:
        return 0
    n = head.get("length") if isinstance(head, dict) and head.get("ok") else 0
    return n if isinstance(n, int) and n >= 0 else 0


def send(fd: int, data: bytes, deadline: float) -> bool:
    """Write ``data`` to the non-blocking ``fd`` by ``deadline`` (``time.monotonic()``); False
    when the child did not take it in time (more than the pipe's buffer holds)."""
    view = memoryview(data)
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    while view:
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(max(1, int(left * 1000))):
                return False
    return True


def read_message(fd: int, timeout: float, limit: int) -> tuple[bytes, str]:
    """One report of a long-lived child (:mod:`.pool`) from ``fd``: its head line and the body
    the head announces, ``(data, "done")``; ``"late"`` when ``timeout`` seconds pass first,
    ``"large"`` past ``limit`` bytes, ``"eof"`` when the child closed the pipe (died) first.
    A child sends nothing past its report until its next job: bytes beyond the announced
    length come back with the report, whose length then does not match (a broken child)."""
    deadline = time.monotonic() + timeout
    buf = bytearray()
    need = -1
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while True:
        if need < 0 and (nl := buf.find(b"\n")) >= 0:
            need = nl + 1 + _length(bytes(buf[:nl]))
        if 0 <= need <= len(buf):
            return bytes(buf), "done"
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(max(1, int(left * 1000))):
            return bytes(buf), "late"
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return bytes(buf), "eof"
        buf += chunk
        if len(buf) > limit:
            return bytes(buf), "large"


def reap(pid: int) -> None:
    """Kill the child if it still runs and collect it (no zombies, no orphans)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def halve_stack() -> bool:  # pragma: no cover - child
    """Make the lower half of the calling thread's stack inaccessible (``mprotect``), so that
    code run here overflows (SIGSEGV) where it would need more than half the stack; meant for a
    forked child that tries what its parent's thread will then do. True when it worked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.pthread_self.restype = ctypes.c_ulong
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        attr = ctypes.create_string_buffer(256)   # pthread_attr_t is 56 or 64 bytes
        if libc.pthread_getattr_np(ctypes.c_ulong(libc.pthread_self()), attr) != 0:
            return False
        low, size = ctypes.c_void_p(), ctypes.c_size_t()
        got = libc.pthread_attr_getstack(attr, ctypes.byref(low), ctypes.byref(size))
        libc.pthread_attr_destroy(attr)
        page = os.sysconf("SC_PAGE_SIZE")
        if got != 0 or not low.value or low.value % page:
            return False
        half = size.value // 2 // page * page
        return bool(libc.mprotect(low.value, half, 0) == 0)   # PROT_NONE
    except (OSError, AttributeError, ValueError):
        return False
