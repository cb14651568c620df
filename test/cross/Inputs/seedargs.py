"""seedargs.py - the command line of npyrand.py and xavier.py:
`[-seed N] A B`."""
import sys


def seed_args(argv, usage):
    """(seed, [A, B]) from argv (the program name first; seed 1 unless
    -seed N is given), or None after writing `usage` to stderr."""
    seed = 1
    args = argv[1:]
    if len(args) >= 2 and args[0] == "-seed":
        seed = int(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.stderr.write(usage)
        return None
    return seed, args
