#!/usr/bin/env python3
# Counts the pixels of one colour in a PNG (8-bit RGB or RGBA, not interlaced, as Chromium
# writes screenshots), for tests/t/opreport-flame:
#	pngcount.py FILE.png R,G,B
# prints "COUNT MINX MAXX" (MINX and MAXX -1 when there are none). Only the standard library.
#	pngcount.py FILE.png R,G,B X0,X1[,Y0,Y1]
# counts only the columns X0..X1 (rows Y0..Y1) and prints "COUNT MINX MAXX MINY MAXY" (tests/t/opreport-timeline:
# which row of a drawing the pixels are on).
import struct
import sys
import zlib

path, want = sys.argv[1], tuple(int(v) for v in sys.argv[2].split(","))
box = tuple(int(v) for v in sys.argv[3].split(",")) if len(sys.argv) > 3 else None
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, inter = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and inter == 0, (depth, ctype, inter)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), w * bpp
prev, count, xs, ys = bytearray(stride), 0, [], []
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if box and len(box) == 4 and not box[2] <= y <= box[3]:
        prev = line
        continue
    for x in range(box[0], min(box[1] + 1, w)) if box else range(w):
        if tuple(line[x * bpp:x * bpp + 3]) == want:
            count += 1
            xs.append(x)
            ys.append(y)
    prev = line
print(count, min(xs) if xs else -1, max(xs) if xs else -1,
      *((min(ys) if ys else -1, max(ys) if ys else -1) if box else ()))
