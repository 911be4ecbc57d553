#!/usr/bin/env python3
"""Host half of tests/t/sched-events: the streams the guest wrote into SHARE, read by
user/opreport, must give the known answers of the workloads. Prints one line per check;
exits 1 naming every check that failed.

Known answers (TSC time: the workloads compute by the TSC, so emulation slows their
instructions, not their times):
  duty      100 x (1 ms computing + 9 ms asleep): on a CPU 100 ms (+5% for its start-up
            spin), asleep 900 ms (+10% for wake-up latency), on-CPU 9..11.5% of its life.
  lockpair  two threads x 100 x (2 ms holding the qlock + 1 ms outside): each on a CPU
            300 ms (+15%: a waiter also spins on the qlock's own spinlock and the rendez's,
            and under emulation their holder's virtual CPU may not run for milliseconds);
            the lock "lockpair" contended at most acquisitions (>= 100 of 200: with 1 ms
            outside and 2 ms inside, the other thread is nearly always waiting), held by
            both.
  every thread that began and ended in the session: its on-CPU time from the switches is
  the kernel's own CPU time for it (the exit record's prev_cpu) to 0.1%.
"""
import re
import subprocess
import sys

share = sys.argv[1]
top = __file__.rsplit("/tests/lib/", 1)[0]
opreport = top + "/user/opreport"
failed = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def run(*args, want_rc=0):
    p = subprocess.run([opreport, *args], capture_output=True, text=True)
    if p.returncode != want_rc:
        check(False, f"opreport {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout


sched = share + "/sched.opf"
stats = run("--stats", sched)
check("Scheduler events, session 1:" in stats, "--stats has the events' accounting")
check("agree with the switches: ok" in stats, "--stats: kernel CPU time and samples agree")
check("MISMATCH" not in stats and "not checked" not in stats,
      "--stats: every core's events add up and its switches continue")
check(re.search(r"flags 0x[0-9a-f]*[4567cdef]\b", stats) is not None, "session flag OPF_S_SCHED")

# --wall rows: tid name core time on on% samples% runnable% blocked% sleep% rendez% qlock%
# io% unknown% kernel
wall = run("--wall", sched)
rows = {}
for m in re.finditer(r"(?m)^ +(\d+) (\S+) +(\d+) +([\d.]+) +([\d.]+) +" + r"([\d.]+)% +" * 9
                     + r"([\d.-]+)$", wall):
    g = m.groups()
    rows.setdefault(g[1], []).append([float(x) if x != "-" else None for x in g[3:]])
print(wall)
duty = rows.get("duty", [])
check(len(duty) == 1, "--wall has one duty thread")
for life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern in duty:
    check(100 <= on <= 105, f"duty on a CPU {on} ms: 100 ms (+5%)")
    check(9 <= onp <= 11.5, f"duty on-CPU {onp}% of its time: 10%")
    check(900 <= sleep * life / 100 <= 990, f"duty asleep {sleep * life / 100:.1f} ms: 900 (+10%)")
    check(kern is not None and abs(kern - on) <= on / 1000,
          f"duty: on-CPU {on} ms is the kernel's CPU time {kern} ms")
pair = rows.get("lockpair", [])
check(len(pair) == 2, "--wall has two lockpair threads")
for life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern in pair:
    check(300 <= on <= 345, f"lockpair on a CPU {on} ms: 300 ms (+15%)")
    check(ql > 0, f"lockpair blocked on the qlock {ql}% of its time")
    check(kern is not None and abs(kern - on) <= on / 1000,
          f"lockpair: on-CPU {on} ms is the kernel's CPU time {kern} ms")
shell = rows.get("shell", [])
check(len(shell) == 1 and shell[0][9] > 0, "the shell waited for 9P replies (io > 0)")

locks = run("--locks", sched)
print(locks)
m = re.search(r"(?m)^  lockpair +qlock +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)\n +holders: (.*)$",
              locks)
check(m is not None, "--locks has the qlock lockpair")
if m:
    check(int(m.group(1)) >= 100, f"lockpair contended {m.group(1)} times (>= 100 of 200)")
    tids = set(re.findall(r"tid (\d+)", m.group(5)))
    check(len(tids) == 2, f"lockpair held by both threads when contended: {m.group(5)}")
    check("lockpair_step" in locks, "--locks names the waiting stack (lockpair_step)")

off = run("--offcpu", sched)
print(off)
check(re.search(r"(?m) sleep +\d+ duty +thread_sleep_us <- duty_step", off) is not None,
      "--offcpu: duty sleeps in duty_step")
check(re.search(r"(?m) qlock lockpair +\d+ lockpair +qlock_wait <- qlock <- lockpair_step",
                off) is not None, "--offcpu: lockpair waits for the qlock in lockpair_step")
check(re.search(r"(?m) io 9p +\d+ shell ", off) is not None, "--offcpu: the shell waits for 9P")

plain = run("--stats", share + "/plain.opf")
check("Scheduler events" not in plain and "unknown type" not in plain,
      "a session without -e sched has no events")
check(re.search(r"flags 0x0\b", plain) is not None, "a session without -e sched has no flag")

if failed:
    print(f"{len(failed)} check(s) failed")
    sys.exit(1)
