#!/usr/bin/env python3
# The horizontal bands of a screenshot that hold coloured pixels (a channel at least 40 above
# another: not white, grey or black), for tests/t/opreport-trace (a flame chart's rows):
#	pngbands.py FILE.png Y0
# prints one line per band at or below row Y0, "TOP BOTTOM" (rows, inclusive), top first; a
# band is a run of rows each with at least 3 coloured pixels. Only the standard library.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pngread import rows  # noqa: E402

path, y0 = sys.argv[1], int(sys.argv[2])
bands, top = [], None
for y, line in rows(path):
    n = 0
    if y >= y0:
        for x in range(0, len(line), 3):
            r, g, b = line[x], line[x + 1], line[x + 2]
            n += max(r, g, b) - min(r, g, b) >= 40
    if n >= 3 and top is None:
        top = y
    elif n < 3 and top is not None:
        bands.append((top, y - 1))
        top = None
if top is not None:
    bands.append((top, y))
for a, b in bands:
    print(a, b)
