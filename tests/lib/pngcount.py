#!/usr/bin/env python3
# Counts the pixels of one colour in a PNG (8-bit RGB or RGBA, not interlaced, as Chromium
# writes screenshots), for tests/t/opreport-flame:
#	pngcount.py FILE.png R,G,B
# prints "COUNT MINX MAXX" (MINX and MAXX -1 when there are none). Only the standard library.
import struct
import sys
import zlib

path, want = sys.argv[1], tuple(int(v) for v in sys.argv[2].split(","))
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
prev, count, xs = bytearray(stride), 0, []
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
    for x in range(w):
        if tuple(line[x * bpp:x * bpp + 3]) == want:
            count += 1
            xs.append(x)
    prev = line
print(count, min(xs) if xs else -1, max(xs) if xs else -1)
