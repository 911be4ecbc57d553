#!/usr/bin/env python3
"""Host half of tests/t/sched-iowait: STREAM is a session with scheduler events (-icount) in
which `run iowrite -c 1` spent MS milliseconds inside its calls to the 9P server, by its own
TSC timing. Those calls sleep for the host's replies and compute a little around them, so
for the iowrite thread opreport must find, with ON its on-CPU time (--wall; about 1% of MS):

  MS - ON <= time off a CPU for "io 9p" (--offcpu; blocked, then runnable once woken) <= MS
  MS - ON - runnable <= blocked for I/O (--wall's io share of its life) <= MS

and both at least 95% of MS, all of it in stacks through the writer, iowrite_put (the
off-CPU flame graph's [io 9p] stacks), and no other reason holding it for more than 1% of
MS. Prints one line per check; exits 1 naming every check that failed."""
import re
import subprocess
import sys

from checklines import check, finish

stream, ms = sys.argv[1], float(sys.argv[2])
top = __file__.rsplit("/tests/lib/", 1)[0]


EPS = 0.01	# ms: opreport prints microseconds, --wall's shares to 0.01%


def near(got, low, eps=EPS):
    """got is the known answer less what the thread computed inside its calls (<= low)."""
    return max(ms - low, 0.95 * ms) - eps <= got <= ms + eps


def run(*args):
    p = subprocess.run([top + "/user/opreport", *args], capture_output=True, text=True)
    check(p.returncode == 0, f"opreport {' '.join(args)}: exit {p.returncode} {p.stderr}")
    return p.stdout


check(ms > 10, f"iowrite waited {ms} ms in all (more than 10)")
# --wall rows: tid name core time-ms on-ms on% samples% ± runnable% blocked% sleep% rendez%
# qlock% io% unknown% kernel-ms (± is the samples column's half-width: left out here)
wall = run("--wall", stream)
print(wall)
rows = [m.groups() for m in re.finditer(
    r"(?m)^ +\d+ iowrite +1 +([\d.]+) +([\d.]+) +([\d.]+)% +([\d.]+)% +[\d.]+ +" +
    r"([\d.]+)% +" * 7 + r"[\d.-]+$", wall)]
check(len(rows) == 1, "--wall has one iowrite thread, on core 1")
on_ms = runq_ms = 0.0
for life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk in rows:
    on_ms, runq_ms = float(on), float(runq) * float(life) / 100
    io_ms = float(io) * float(life) / 100
    check(near(io_ms, on_ms + runq_ms, EPS + float(life) / 2e4), f"--wall: iowrite blocked for I/O {io_ms:.3f} ms: "
          f"{ms} ms less up to {on_ms} on a CPU and {runq_ms:.3f} runnable")
    other = (float(sleep) + float(rdz) + float(ql) + float(unk)) * float(life) / 100
    check(other <= 0.01 * ms, f"--wall: iowrite blocked otherwise {other:.3f} ms (<= 1%)")

# --offcpu rows: off ms, %, blocked ms, count, max ms, reason, tid thread, stack
off = run("--offcpu", stream)
print(off)
by_why = {}
for m in re.finditer(r"(?m)^ +([\d.]+) +[\d.]+% +([\d.]+) +\d+ +[\d.]+ +(.+?) +\d+ iowrite ",
                     off):
    t = by_why.setdefault(m.group(3), [0.0, 0.0])
    t[0] += float(m.group(1))
    t[1] += float(m.group(2))
io = by_why.pop("io 9p", [0.0, 0.0])
check(near(io[0], on_ms), f"--offcpu: iowrite off a CPU for io 9p {io[0]:.3f} ms: {ms} ms "
      f"less up to {on_ms} on a CPU")
check(near(io[1], on_ms + runq_ms), f"--offcpu: of that blocked {io[1]:.3f} ms: {ms} ms less "
      f"up to {on_ms} on a CPU and {runq_ms:.3f} runnable")
rest = sum(t[0] for t in by_why.values())
check(rest <= 0.01 * ms, f"--offcpu: iowrite off for other reasons {by_why}: <= 1%")

# the off-CPU flame graph's stacks: [io 9p] rooted, through the writer, in microseconds
io_us = 0
for line in run("--offcpu", "--folded", stream).splitlines():
    stack, _, n = line.rpartition(" ")
    if stack.startswith("[io 9p];") and ";iowrite_put;" in stack:
        io_us += int(n)
check(near(io_us / 1e3, on_ms), f"--offcpu --folded: [io 9p] stacks through iowrite_put "
      f"{io_us} us: {ms * 1e3:.0f} us")
finish()
