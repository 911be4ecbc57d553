#!/usr/bin/env python3
"""Host half of tests/t/sched-wakefold: the stream STREAM must give the known answers.
  wakewait-b  waited runnable 100 x 1 ms (the waker computed with interrupts off after
              each wake-up): 100 ms (+5%) -- 0 if the wake-ups took their switches' time,
              and blocked instead if they were lost.
  wakelate    woken on core 1 from core 0 while wakehold held core 1, never switched in
              before the stop: one OPF_WAKEUP of it (OPF_W_RESUMED, in core 1's stream,
              waker_core 0), and --wall has it runnable all its time in the session.
  --stats     every core's events add up, the switches continue, CPU times agree.
Prints one line per check; exits 1 naming every check that failed.
"""
import re
import struct
import subprocess
import sys

from checklines import check, finish

stream = sys.argv[1]
top = __file__.rsplit("/tests/lib/", 1)[0]


def run(*args):
    p = subprocess.run([top + "/user/opreport", *args], capture_output=True, text=True)
    check(p.returncode == 0, f"opreport {' '.join(args)}: exit {p.returncode}")
    return p.stdout + p.stderr


stats = run("--stats", stream)
check("agree with the switches: ok" in stats, "--stats: kernel CPU time and samples agree")
check("MISMATCH" not in stats and "not checked" not in stats,
      "--stats: every core's events add up and its switches continue")
print(stats)

# --wall rows: tid name core time on on% samples% ± runnable% blocked% sleep% rendez% qlock%
# io% unknown% kernel (± is the samples column's half-width, in points: left out here)
wall = run("--wall", stream)
print(wall)
rows = {}
for m in re.finditer(r"(?m)^ +(\d+) (\S+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)% +([\d.]+)% +"
                     r"[\d.]+ +" + r"([\d.]+)% +" * 7 + r"([\d.-]+)$", wall):
    g = m.groups()
    rows.setdefault(g[1], []).append((int(g[0]), [float(x) if x != "-" else None
                                                  for x in g[3:]]))
b = rows.get("wakewait-b", [])
check(len(b) == 1, "--wall has one wakewait-b thread")
for _, (life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern) in b:
    ms = runq * life / 100
    check(100 <= ms <= 105, f"wakewait-b runnable {ms:.1f} ms: 100 ms (+5%)")
late = rows.get("wakelate", [])
check(len(late) == 1, "--wall has one wakelate thread")
late_tid = late[0][0] if late else None
for _, (life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern) in late:
    check(life >= 10 and runq >= 99.9, f"wakelate runnable {runq}% of its {life} ms: all of "
          "it (at least the 50 ms the shell slept)")


# OPF_WAKEUP (14): h(type, flags, len) core target_core tid waker waker_core pad tsc
def records(data):
    off = 0
    while off + 8 <= len(data):
        typ, flags, ln = struct.unpack_from("<HHI", data, off)
        yield off, typ, flags
        off += max(ln, 8)


data = open(stream, "rb").read()
wakes = [struct.unpack_from("<HHIHHIIHHQ", data, off) for off, typ, _ in records(data)
         if typ == 14]
mine = [w for w in wakes if w[5] == late_tid]
check(len(mine) == 1, f"{len(mine)} OPF_WAKEUP of wakelate: 1")
for w in mine:
    check(w[1] & 2 and w[3] == 1 and w[4] == 1 and w[7] == 0,
          f"wakelate's wake-up: flags {w[1]:#x} core {w[3]} target {w[4]} waker_core {w[7]}: "
          "resumed (0x2), in core 1's stream, woken from core 0")
check(all(w[1] & 2 for w in wakes), f"all {len(wakes)} wake-ups are OPF_W_RESUMED")

finish()
