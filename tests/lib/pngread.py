# Reads a PNG (8-bit RGB or RGBA, not interlaced, as Chromium writes screenshots) with the
# standard library alone, for the tests' screenshot checkers (pngcount.py, pngbands.py):
#	from pngread import rows
#	for y, line in rows(path): line[3 * x:3 * x + 3] is pixel x's R, G, B
# (each line is the row's RGB bytes, alpha dropped).
import struct
import zlib


def _unfilter(f, line, prev, bpp):
    """PNG's per-row filter f undone on line (bytearray) in place, given the row above."""
    for i in range(len(line)):
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


def rows(path):
    """Each row of the image at path: (y, its RGB bytes), top to bottom."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w, h, bpp = 8, b"", 0, 0, 3
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
    prev = bytearray(stride)
    for y in range(h):
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        _unfilter(raw[y * (stride + 1)], line, prev, bpp)
        prev = line
        yield y, line if bpp == 3 else bytes(v for i, v in enumerate(line) if i % 4 != 3)
