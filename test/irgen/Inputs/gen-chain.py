"""gen-chain.py N: a graph IR function that is one chain of N nodes
(a Relu, then Negs) ending in a Save, written to standard output."""
import sys

n = int(sys.argv[1])
w = sys.stdout.write
w("placeholder @x : float<4>\nplaceholder @y : float<4>\nfunc @chain {\n")
w("  %n0 = Relu(@x) : float<4>\n")
for i in range(1, n):
    w("  %%n%d = Neg(%%n%d) : float<4>\n" % (i, i - 1))
w("  Save(%%n%d, @y)\n}\n" % (n - 1))
