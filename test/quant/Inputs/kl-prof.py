#!/usr/bin/env python3
"""kl-prof.py - writes a profile of Inputs/fc-relu.glow for the KL test:
x has 1024 bins over [-1, 100]; all but one count lie in [-1, 1] (a
triangle around 0), one outlier sits in the last bin."""
import sys

bins, lo, hi = 1024, -1.0, 100.0
w = (hi - lo) / bins
hist = [0] * bins
for b in range(bins):
    c = lo + (b + 0.5) * w
    if -1.0 <= c <= 1.0:
        hist[b] = int(1000 * (1.0 - abs(c)))
hist[-1] = 1
with open(sys.argv[1], "w") as f:
    f.write("glow-profile 1\n")
    f.write('value "x" 0 min -1.0 max 100.0 bins 1024 = %s\n' % " ".join(map(str, hist)))
    f.write('value "fc" 0 min -2.0 max 6.0 bins 4 = 1 0 2 1\n')
    f.write('value "r" 0 min 0.0 max 6.0 bins 4 = 2 1 0 1\n')
    f.write('value "s" 0 min 0.0 max 1.0 bins 4 = 1 0 0 1\n')
