# Runs the command given as arguments with SIGINT and SIGTERM at their
# default action. lit's worker processes ignore SIGINT and a child inherits
# an ignored signal (the tools keep it ignored, as under nohup), so the
# signals-*.test tests start the tools through this.
import os
import signal
import sys

signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])
