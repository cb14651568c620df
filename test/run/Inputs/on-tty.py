"""on-tty.py - runs a command with its standard error on a pseudo-terminal
(standard output stays a pipe) and prints what it wrote there, then exits
with the command's status: progress that a tool shows on a terminal only
becomes visible to FileCheck.

    on-tty.py CMD ARG...
"""
import os
import pty
import subprocess
import sys

master, slave = pty.openpty()
proc = subprocess.Popen(sys.argv[1:], stderr=slave)
os.close(slave)
chunks = []
while True:
    try:
        data = os.read(master, 4096)
    except OSError:  # EIO: the last holder of the terminal closed it
        break
    if not data:
        break
    chunks.append(data)
status = proc.wait()
# one line per carriage return, so each progress update is a line
text = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
sys.stdout.write(text)
sys.exit(status)
