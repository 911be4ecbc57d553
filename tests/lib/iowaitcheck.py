#!/usr/bin/env python3
"""Host half of tests/t/sched-iowait: STREAM is a session with scheduler events (-icount) in
which `run iowrite -c 1` spent MS milliseconds inside its calls to the 9P server, by its own
TSC timing. Those calls sleep for the host's replies and compute a little around them (the
thread's whole on-CPU time is about 1% of MS), so opreport must find the iowrite thread
waiting for I/O (reason "io 9p", in the writer iowrite_put) between 97% and 100.5% of MS:
--wall's io share of its life (blocked until woken), --offcpu's time off a CPU and its blocked
part, and the off-CPU flame graph's [io 9p] stacks through iowrite_put. No other reason may
hold the thread for more than 1% of MS. Prints one line per check; exits 1 naming every
check that failed."""
import re
import subprocess
import sys

stream, ms = sys.argv[1], float(sys.argv[2])
top = __file__.rsplit("/tests/lib/", 1)[0]
failed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def near(got):
    return 0.97 * ms <= got <= 1.005 * ms


def run(*args):
    p = subprocess.run([top + "/user/opreport", *args], capture_output=True, text=True)
    check(p.returncode == 0, f"opreport {' '.join(args)}: exit {p.returncode} {p.stderr}")
    return p.stdout


check(ms > 10, f"iowrite waited {ms} ms in all (more than 10)")
# --wall rows: tid name core time on on% samples% runnable% blocked% sleep% rendez% qlock%
# io% unknown% kernel
wall = run("--wall", stream)
print(wall)
rows = [m.groups() for m in re.finditer(
    r"(?m)^ +\d+ iowrite +1 +([\d.]+) +[\d.]+ +" + r"([\d.]+)% +" * 9 + r"[\d.-]+$", wall)]
check(len(rows) == 1, "--wall has one iowrite thread, on core 1")
for life, on, smp, runq, blk, sleep, rdz, ql, io, unk in rows:
    io_ms = float(io) * float(life) / 100
    check(near(io_ms), f"--wall: iowrite blocked for I/O {io_ms:.3f} ms: {ms} ms (-3%..+0.5%)")
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
check(near(io[0]), f"--offcpu: iowrite off a CPU for io 9p {io[0]:.3f} ms: {ms} ms")
check(near(io[1]), f"--offcpu: of that blocked {io[1]:.3f} ms: {ms} ms")
rest = sum(t[0] for t in by_why.values())
check(rest <= 0.01 * ms, f"--offcpu: iowrite off for other reasons {by_why}: <= 1%")

# the off-CPU flame graph's stacks: [io 9p] rooted, through the writer, in microseconds
io_us = 0
for line in run("--offcpu", "--folded", stream).splitlines():
    stack, _, n = line.rpartition(" ")
    if stack.startswith("[io 9p];") and ";iowrite_put;" in stack:
        io_us += int(n)
check(near(io_us / 1e3), f"--offcpu --folded: [io 9p] stacks through iowrite_put "
      f"{io_us} us: {ms * 1e3:.0f} us")
if failed:
    print(f"{len(failed)} check(s) failed")
    sys.exit(1)
