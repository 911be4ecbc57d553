#!/usr/bin/env python3
"""tests/lib/perfparser.py OUT: read the stream hotspot-perfparser writes (what hotspot's GUI
reads) and print, per leaf function, the samples and the period they carry, as hotspot counts
them, one "name samples period" line each, largest first. Exits 1 naming the first sample
whose event (attribute) id hotspot would not know ("Unexpected attribute id" in the GUI).

The stream: "QPERFSTREAM\\0", a little-endian int32 (the QDataStream version), then records,
each a little-endian int32 size and a big-endian QDataStream payload whose first byte is the
event type (perfparser's PerfUnwind::EventType)."""
import struct, sys
from collections import Counter

LOCATION, SYMBOL, STRING, ATTRIBUTES, SAMPLE = 3, 4, 5, 11, 13


def records(data):
    assert data[:12] == b"QPERFSTREAM\0", "not a perfparser stream"
    pos = 16
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from("<i", data, pos)
        yield data[pos + 4:pos + 4 + n]
        pos += 4 + n


def main():
    strings, symbols, parents, attrs = {}, {}, {}, set()
    samples, periods = Counter(), Counter()
    leaves = []
    for r in records(open(sys.argv[1], "rb").read()):
        t = r[0]
        if t == STRING:
            sid, ln = struct.unpack_from(">iI", r, 1)
            strings[sid] = r[9:9 + ln].decode() if ln != 0xFFFFFFFF else ""
        elif t == LOCATION:	# id, address, file, pid, line, column, parent location
            loc, parent = struct.unpack_from(">i", r, 1)[0], struct.unpack_from(">i", r, 29)[0]
            parents[loc] = parent
        elif t == SYMBOL:
            loc, name = struct.unpack_from(">ii", r, 1)
            symbols[loc] = name
        elif t == ATTRIBUTES:
            attrs.add(struct.unpack_from(">i", r, 1)[0])
        elif t == SAMPLE:
            p = 1 + 4 + 4 + 8 + 4
            (nf,) = struct.unpack_from(">I", r, p)
            frames = struct.unpack_from(">%di" % nf, r, p + 4)
            p += 4 + 4 * nf + 1
            (nv,) = struct.unpack_from(">I", r, p)
            values = [struct.unpack_from(">iQ", r, p + 4 + 12 * i) for i in range(nv)]
            for a, _ in values:
                if a not in attrs:
                    print("sample with unknown attribute id %d (hotspot: Unexpected attribute "
                          "id)" % a)
                    sys.exit(1)
            leaves.append((frames[0] if frames else None, sum(v for _, v in values)))
    for loc, v in leaves:
        while loc not in symbols and parents.get(loc, -1) != -1:	# an address in a symbol
            loc = parents[loc]
        name = strings.get(symbols.get(loc), "??")
        samples[name] += 1
        periods[name] += v
    for name, n in samples.most_common():
        print(name, n, periods[name])


if __name__ == "__main__":
    main()
