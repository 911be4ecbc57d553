#!/usr/bin/env python3
"""tests/lib/hotspot_offcpu.py OUT [OFFCPU FOLDED_US FOLDED_N]: hotspot's off-CPU cost from
the stream hotspot-perfparser writes (OUT), computed as hotspot 1.3.0's GUI computes it
(src/parsers/perf/perfparser.cpp, addContextSwitch), so a test can check it without the GUI:

  - a thread is known once a sample of its pid/tid arrived (any event); a context switch of
    a thread not yet known is ignored;
  - a switch-in of a thread whose last switch was a switch-out is one off-CPU event of the
    time between the two, on the stack of the thread's last sched:sched_switch sample (none:
    it counts in the total only). A sample without call chain frames (the kernel records
    no stack of a preemption or yield) gets its ip as its only frame, 0 for a tracepoint:
    that stack is read here as the empty stack it is.

Alone: prints "count ns root;...;leaf" per stack (by function name), largest first, then
"total count ns". With opreport's outputs on the same stream (--offcpu; --offcpu --folded;
--offcpu --folded --weight samples) it checks, and exits 1 unless: the total count equals
the --offcpu table's and the total time its "ms in all" (to 1 us); and for every function
hotspot names, its inclusive off-CPU events and time equal opreport's folded stacks' (the
reason root left out; to 0.5 us per event, opreport's rounding; stretches under 0.5 us,
which opreport's folded stacks leave out, left out here too). Exits 1 too when the stream
has no sched:sched_switch attribute."""
import re, struct, sys
from collections import Counter

from perfparser import records

LOCATION, SYMBOL, STRING, ATTRIBUTES, SWITCH, SAMPLE, TPSAMPLE = 3, 4, 5, 11, 12, 13, 14


def sample(r):
    """(pid, tid), frames (leaf first), attribute ids of a (tracepoint) sample"""
    pid, tid = struct.unpack_from(">II", r, 1)
    p = 1 + 4 + 4 + 8 + 4
    (nf,) = struct.unpack_from(">I", r, p)
    frames = struct.unpack_from(">%di" % nf, r, p + 4)
    p += 4 + 4 * nf + 1
    (nv,) = struct.unpack_from(">I", r, p)
    ids = [struct.unpack_from(">iQ", r, p + 4 + 12 * i)[0] for i in range(nv)]
    return (pid, tid), frames, ids


class Stream:
    def __init__(self):
        self.strings, self.symbols, self.parents, self.attr_name = {}, {}, {}, {}
        self.addr = {}	# location -> address
        self.threads = {}	# (pid, tid) -> [out, last switch time, sched_switch stack]
        self.events = []	# (stack of location ids or None, ns)

    def name(self, loc):
        while loc not in self.symbols and self.parents.get(loc, -1) != -1:	# inside a symbol
            loc = self.parents[loc]
        return self.strings.get(self.symbols.get(loc), "??")

    def switch_id(self, ids):
        return any(self.strings.get(self.attr_name.get(a)) == "sched:sched_switch" for a in ids)

    def record(self, r):
        t = r[0]
        if t == STRING:
            sid, ln = struct.unpack_from(">iI", r, 1)
            self.strings[sid] = r[9:9 + ln].decode() if ln != 0xFFFFFFFF else ""
        elif t == LOCATION:
            loc, addr = struct.unpack_from(">iQ", r, 1)
            self.parents[loc] = struct.unpack_from(">i", r, 29)[0]
            self.addr[loc] = addr
        elif t == SYMBOL:
            loc, name = struct.unpack_from(">ii", r, 1)
            self.symbols[loc] = name
        elif t == ATTRIBUTES:	# id, type, config, name
            aid, name = struct.unpack_from(">i", r, 1)[0], struct.unpack_from(">i", r, 17)[0]
            self.attr_name[aid] = name
        elif t in (SAMPLE, TPSAMPLE):
            key, frames, ids = sample(r)
            th = self.threads.setdefault(key, [False, 0, None])
            if self.switch_id(ids):
                th[2] = () if len(frames) == 1 and self.addr.get(frames[0]) == 0 else frames
        elif t == SWITCH:
            pid, tid, time, _, out = struct.unpack_from(">IIQI?", r, 1)
            th = self.threads.get((pid, tid))
            if th is None:
                return
            if not out and th[0]:
                self.events.append((th[2], time - th[1]))
            th[0], th[1] = out, time


def read(path):
    s = Stream()
    for r in records(open(path, "rb").read()):
        s.record(r)
    if "sched:sched_switch" not in (s.strings.get(n) for n in s.attr_name.values()):
        print("hotspot-perfparser's stream has no sched:sched_switch event")
        sys.exit(1)
    # stacks by function name, root first
    return [(tuple(s.name(l) for l in reversed(st)) if st is not None else None, ns)
            for st, ns in s.events]


def inclusive(stacks):
    """[(names, count, time)] -> {function: [count, time]}, each function once per stack"""
    per = {}
    for names, n, t in stacks:
        for f in set(names):
            c = per.setdefault(f, [0, 0])
            c[0] += n
            c[1] += t
    return per


def folded(path):
    """opreport's folded stacks without their reason root: {names: value}"""
    out = Counter()
    for line in open(path):
        stack, v = line.rsplit(" ", 1)
        out[tuple(stack.split(";")[1:])] += int(v)
    return out


def check(events, offcpu, us_path, n_path):
    bad = 0
    text = open(offcpu).read()
    op_ms = sum(float(m) for m in re.findall(r"\(([\d.]+) ms in all", text))
    rows = re.findall(r"^\s*[\d.]+\s+[\d.]+%\s+[\d.]+\s+(\d+)\s", text, re.M)
    op_n = sum(int(m) for m in rows)
    hs_n, hs_ns = len(events), sum(ns for _, ns in events)
    ok = hs_n == op_n and abs(hs_ns - op_ms * 1e6) <= 1000
    print("%s: hotspot's off-CPU events %d, %.6f ms; opreport --offcpu %d, %.3f ms"
          % ("ok" if ok else "FAIL", hs_n, hs_ns / 1e6, op_n, op_ms))
    bad += not ok
    us, n = folded(us_path), folded(n_path)
    op = inclusive([(k, n[k], us[k] * 1000) for k in us])
    hs = inclusive([(k, 1, ns) for k, ns in events if k is not None and ns >= 500])
    for f, (c, t) in sorted(hs.items(), key=lambda kv: -kv[1][1]):
        oc, ot = op.get(f, [0, 0])
        ok = c == oc and abs(t - ot) <= 500 * c
        print("%s: %-16s hotspot %4d events %12.3f us   opreport %4d events %12.3f us"
              % ("ok" if ok else "FAIL", f, c, t / 1e3, oc, ot / 1e3))
        bad += not ok
    if not hs:
        print("FAIL: hotspot has no off-CPU cost on any stack")
        bad += 1
    return bad


def main():
    events = read(sys.argv[1])
    if len(sys.argv) == 5:
        sys.exit(1 if check(events, *sys.argv[2:]) else 0)
    per = {}
    for names, ns in events:
        c = per.setdefault(names, [0, 0])
        c[0] += 1
        c[1] += ns
    for names, (c, ns) in sorted(per.items(), key=lambda kv: -kv[1][1]):
        if names is not None:
            print(c, ns, ";".join(names) or "(no stack)")
    print("total", len(events), sum(ns for _, ns in events))


main()
