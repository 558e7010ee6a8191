"""A pool of worker processes that never outlives the build that started it.

A site build killed on the way (a CI time-out sends SIGTERM, a user presses Ctrl-C) must
not leave its workers computing with no parent. Two guards:

- each worker asks the kernel for SIGKILL when its parent dies (`PR_SET_PDEATHSIG`, Linux),
  and elsewhere a thread of the worker polls its parent's id and exits when it changes;
- while the pool is open, SIGTERM in the build raises `Stopped` (SIGINT already raises
  KeyboardInterrupt), and leaving the pool on any exception terminates the workers.

Workers ignore SIGINT: Ctrl-C reaches the whole process group, and the build alone decides
(a worker's KeyboardInterrupt would print one traceback per worker).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from types import FrameType

PR_SET_PDEATHSIG = 1
"""prctl(2)'s option: the signal this process gets when its parent thread exits."""
POLL_SECONDS = 1.0
"""How often a worker without `PR_SET_PDEATHSIG` checks that its parent is alive."""


class Stopped(SystemExit):
    """The build got SIGTERM while its workers computed; they are terminated."""


def _exit_with_parent(parent: int) -> None:
    """A worker's initializer: die with the build (see the module's docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _death_signal(signal.SIGKILL):
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)


def _death_signal(number: int) -> bool:
    """Ask Linux for `number` when the parent dies; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(number), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)


def _stop(number: int, frame: FrameType | None) -> None:
    raise Stopped(128 + number)


@contextmanager
def worker_pool(processes: int) -> Iterator[Pool]:
    """A pool of `processes` forked workers (no `__main__` guard needed in the caller) that
    are terminated when the block is left by an exception, SIGTERM included, and that die
    with this process."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    # Only the main thread may set a handler (`mkdocs serve` builds in another one; its
    # workers still die with the process).
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _stop) if main else None
    try:
        pool = context.Pool(processes, _exit_with_parent, (os.getpid(),))
        try:
            yield pool
        except BaseException:
            pool.terminate()
            raise
        else:
            pool.close()
        finally:
            pool.join()
    finally:
        if main and before is not None:
            signal.signal(signal.SIGTERM, before)
