#!/usr/bin/env python3
# Counts the pixels of one colour in a PNG (pngread.py reads it), for tests/t/opreport-flame:
#	pngcount.py FILE.png R,G,B
# prints "COUNT MINX MAXX" (MINX and MAXX -1 when there are none). Only the standard library.
#	pngcount.py FILE.png R,G,B X0,X1[,Y0,Y1]
# counts only the columns X0..X1 (rows Y0..Y1) and prints "COUNT MINX MAXX MINY MAXY" (tests/t/opreport-timeline:
# which row of a drawing the pixels are on).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pngread import rows  # noqa: E402

path, want = sys.argv[1], bytes(int(v) for v in sys.argv[2].split(","))
box = tuple(int(v) for v in sys.argv[3].split(",")) if len(sys.argv) > 3 else None
count, xs, ys = 0, [], []
for y, line in rows(path):
    if box and len(box) == 4 and not box[2] <= y <= box[3]:
        continue
    w = len(line) // 3
    for x in range(box[0], min(box[1] + 1, w)) if box else range(w):
        if line[3 * x:3 * x + 3] == want:
            count += 1
            xs.append(x)
            ys.append(y)
print(count, min(xs) if xs else -1, max(xs) if xs else -1,
      *((min(ys) if ys else -1, max(ys) if ys else -1) if box else ()))
