"""stop-during-cc.py - sends SIGNAL to a tool while the C compiler it
started runs, and reports how the tool ended and what is left in the
temporary directory.

    stop-during-cc.py SIGNAL TMPDIR MARKER CMD ARG...

The command's compiler ($GLOW_CC, set by the test) must create the file
MARKER when it starts and then take long enough for the signal to arrive.
Prints "status: signal N" (or "status: exit N"), then "left: " and the
names of the entries left in TMPDIR, then "compiler: running" when a
process of the compiler is still alive ("compiler: stopped" otherwise).
"""
import os
import signal
import subprocess
import sys
import time

sig, tmpdir, marker = getattr(signal, sys.argv[1]), sys.argv[2], sys.argv[3]
# lit's workers ignore SIGINT, and an ignored signal stays ignored across
# exec (as nohup wants): give the tool the default disposition back
proc = subprocess.Popen(sys.argv[4:], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
deadline = time.time() + 60
while not os.path.exists(marker) and proc.poll() is None and time.time() < deadline:
    time.sleep(0.02)
pid = int(open(marker).read().strip() or "0") if os.path.exists(marker) else 0
proc.send_signal(sig)
rc = proc.wait()
print("status: signal %d" % -rc if rc < 0 else "status: exit %d" % rc)
print("left: " + " ".join(sorted(os.listdir(tmpdir))))


def alive(pid):
    try:
        os.kill(pid, 0)
        # a zombie waiting for its parent to reap it has stopped too
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


# a process killed by a signal may take a moment to die (the compiler
# started by the shell is a grandchild the tool does not wait for)
deadline = time.time() + 10
while pid and alive(pid) and time.time() < deadline:
    time.sleep(0.05)
print("compiler: " + ("running" if pid and alive(pid) else "stopped"))
