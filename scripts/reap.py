#!/usr/bin/python3
"""`reap.py CMD [ARGS...]`: runs CMD as a child subreaper (Linux prctl PR_SET_CHILD_SUBREAPER) and exits with its status.

Every process CMD starts is then waited for here, also the ones whose parent ended first: Chromium's renderers and
helpers outlive the browser process that started them, are re-parented, and their CPU time would otherwise reach
no one. Waited for, it adds to this process's children's usage, which scripts/test.sh reads (bash's `times`) as
the stage's CPU time. Processes still running when CMD has ended get a few seconds to finish, then SIGTERM, then
SIGKILL: a stage leaves nothing behind.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 10


def children():
    """PIDs of the processes whose parent is this one (re-parented ones included)."""
    me, found = os.getpid(), []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat', 'rb') as f:
                stat = f.read()
        except OSError:
            continue
        # The second field (the command) may hold spaces and parentheses: the parent's PID follows the last ')'.
        fields = stat[stat.rindex(b')') + 2:].split()
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


def reap_all():
    """Waits for every child that has ended; returns whether any is left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: reap.py CMD [ARGS...]')
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f'reap.py: prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}')
    child = subprocess.Popen(sys.argv[1:])
    # Ctrl-C reaches the command through the process group; kill is passed on.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    # Every child that ends is waited for as it ends (no pile of zombies); the command's own status is kept.
    while True:
        try:
            pid, wstatus = os.waitpid(-1, 0)
        except InterruptedError:
            continue
        if pid == child.pid:
            status = os.waitstatus_to_exitcode(wstatus)
            break
    # What is left: a grace period, then SIGTERM, then SIGKILL.
    for sig, wait_s in ((None, GRACE_S), (signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        if sig:
            for pid in children():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + wait_s
        while reap_all() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not reap_all():
            break
    sys.exit(status if status >= 0 else 128 - status)


main()
