#!/usr/bin/env python3
"""Host half of tests/t/sched-events: the streams the guest wrote into SHARE, read by
user/opreport, must give the known answers of the workloads. Prints one line per check;
exits 1 naming every check that failed.

Known answers (the guest runs under -icount: its time is the instructions it executes, so
computing 1 ms is exactly that, whatever else the host does):
  duty      100 x (1 ms computing + 9 ms asleep): on a CPU 100 ms (+5% for its start-up
            spin), asleep 900 ms (+10% for wake-up latency), on-CPU 9..11.5% of its life.
  lockpair  two threads x 100 x (2 ms asleep holding the qlock + 1 ms asleep outside):
            they alternate, so nearly every acquisition (>= 190 of 200) waits 1 ms for the
            other's: 200 ms of waiting in all (+10%), each thread blocked on the qlock
            100 ms (+-10%) and asleep 300 ms (+10%); the lock held by both.
  yield     two threads x 200 yields to each other: some 400 switches for reason yield
            (a few may be preemptions), written without a stack.
  twonap    100 x 1 ms asleep, alternately through twonap_a and twonap_b (same frame
            addresses, other return addresses): --offcpu has 50 stops under each.
  every thread that began and ended in the session: its on-CPU time from the switches is
  the kernel's own CPU time for it (the exit record's prev_cpu) to 0.1%.
"""
import json
import re
import struct
import subprocess
import sys

from checklines import check, finish

share = sys.argv[1]
top = __file__.rsplit("/tests/lib/", 1)[0]
opreport = top + "/user/opreport"


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

# --wall rows: tid name core time on on% samples% ± runnable% blocked% sleep% rendez% qlock%
# io% unknown% kernel (± is the samples column's half-width, in points: left out here)
wall = run("--wall", sched)
rows = {}
for m in re.finditer(r"(?m)^ +(\d+) (\S+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)% +([\d.]+)% +"
                     r"[\d.]+ +" + r"([\d.]+)% +" * 7 + r"([\d.-]+)$", wall):
    g = m.groups()
    rows.setdefault(g[1], []).append([float(x) if x != "-" else None for x in g[3:]])
print(wall)
duty = rows.get("duty", [])
check(len(duty) == 1, "--wall has one duty thread")
for life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern in duty:
    check(100 <= on <= 105, f"duty on a CPU {on} ms: 100 ms (+5%)")
    check(9 <= onp <= 11.5, f"duty on-CPU {onp}% of its time: 10%")
    check(895 <= sleep * life / 100 <= 990, f"duty asleep {sleep * life / 100:.1f} ms: 900 (+10%)")
    check(kern is not None and abs(kern - on) <= on / 1000,
          f"duty: on-CPU {on} ms is the kernel's CPU time {kern} ms")
pair = rows.get("lockpair", [])
check(len(pair) == 2, "--wall has two lockpair threads")
for life, on, onp, smp, runq, blk, sleep, rdz, ql, io, unk, kern in pair:
    check(90 <= ql * life / 100 <= 110, f"lockpair blocked on the qlock {ql * life / 100:.1f} ms:"
          " 100 ms (+-10%)")
    check(295 <= sleep * life / 100 <= 330, f"lockpair asleep {sleep * life / 100:.1f} ms: 300 ms"
          " (+10%)")
    check(kern is not None and abs(kern - on) <= on / 1000,
          f"lockpair: on-CPU {on} ms is the kernel's CPU time {kern} ms")
shell = rows.get("shell", [])
check(len(shell) == 1 and shell[0][9] > 0, "the shell waited for 9P replies (io > 0)")

locks = run("--locks", sched)
print(locks)
# lock kind waits not-done total max mean, then the holders each switch-out named
m = re.search(r"(?m)^  lockpair +qlock +(\d+) +\d+ +([\d.]+) +([\d.]+) +([\d.]+)\n +holders[^:]*: (.*)$",
              locks)
check(m is not None, "--locks has the qlock lockpair")
if m:
    check(int(m.group(1)) >= 190, f"lockpair contended {m.group(1)} times (>= 190 of 200)")
    check(190 <= float(m.group(2)) <= 220, f"lockpair waits {m.group(2)} ms in all: 200 (+10%)")
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
# twonap: 50 sleeps through each of two call sites with the same frame addresses
for site in ("twonap_a", "twonap_b"):
    n = sum(int(c) for c in re.findall(r"(?m)^ +[\d.]+ +[\d.]+% +[\d.]+ +(\d+) +[\d.]+ +sleep +\d+ "
                                         r"+twonap +thread_sleep_us <- " + site + r" <- twonap_step", off))
    check(n == 50, f"--offcpu: twonap slept {n} times in {site}: 50")
# off ms, %, blocked ms, count, max ms, reason, tid, thread, stack: a yield has none (short)
ny = sum(int(n) for n in re.findall(r"(?m)^ +[\d.]+ +[\d.]+% +[\d.]+ +(\d+) +[\d.]+ +yield +\d+ "
                                    r"yield +-$", off))
check(ny >= 300, f"--offcpu: the yield threads yielded {ny} times (about 400), no stack")

# The off-CPU flame graph's stacks: rooted in the reason, weighing microseconds.
folded = run("--offcpu", "--folded", sched)
fw = {}
for line in folded.splitlines():
    stack, _, n = line.rpartition(" ")
    fw[stack] = fw.get(stack, 0) + int(n)
duty_us = sum(n for k, n in fw.items() if k.startswith("[sleep];") and ";duty_step;" in k)
# as --wall's bound above: a sleep's stretch starts at its switch-out, a few microseconds
# after its deadline was set (an NMI can land between), so 100 of them may fall short by as much
check(895000 <= duty_us <= 990000, f"--offcpu --folded: duty asleep {duty_us} us: 900000 (+10%)")
ql_us = sum(n for k, n in fw.items() if k.startswith("[qlock lockpair];") and ";lockpair_step;" in k)
check(190000 <= ql_us <= 230000, f"--offcpu --folded: lockpair off for the qlock {ql_us} us: "
      "200000 (+15%)")
check(all(k.startswith("[") for k in fw), "--offcpu --folded: every stack is rooted in its reason")
run("--offcpu", "--flame", share + "/off.svg", sched)
svg = open(share + "/off.svg").read()
check("[qlock lockpair]" in svg and "duty_step" in svg, "--offcpu --flame draws the off-CPU graph")

# --trace and --timeline of the real stream: the JSON's spans per core add up to --wall's
# busy and idle (to the microsecond of each span's ends: the trace's times are whole
# microseconds), duty is woken about 100 times (a flow from its waker to each switch-in), the
# page draws duty's spans.
run("--trace", share + "/t.json", "--timeline", share + "/t.html", sched)
ev = json.load(open(share + "/t.json"))["traceEvents"]
for m in re.finditer(r"(?m)^ +(\d+) +([\d.]+) +[\d.]+% +([\d.]+) +[\d.]+% +([\d.]+) +[\d.]+%$",
                     wall):
    core, busy, idle = int(m.group(1)), float(m.group(2)), float(m.group(3))
    spans = {c: [e["dur"] for e in ev if e["ph"] == "X" and e["tid"] == core and e["cat"] == c]
             for c in ("thread", "idle")}
    got = {c: sum(v) / 1e3 for c, v in spans.items()}
    tol = {c: (len(v) + 1) / 1e3 for c, v in spans.items()}
    check(abs(got["thread"] - busy) <= tol["thread"] and abs(got["idle"] - idle) <= tol["idle"],
          f"--trace core {core}: spans busy {got['thread']:.3f} idle {got['idle']:.3f} ms, "
          f"--wall {busy} / {idle} (to {tol['thread']:.3f} / {tol['idle']:.3f} ms)")
    check(float(m.group(4)) == 0, f"core {core}: no unknown time (no event lost)")
starts = {(e["tid"], e["ts"]): e["name"] for e in ev if e["ph"] == "X"}
woken = [f for f in ev if f["ph"] == "f" and starts.get((f["tid"], f["ts"]), "").startswith("duty ")]
check(99 <= len(woken) <= 101, f"--trace: duty woken {len(woken)} times (flows into its spans): 100")
page = open(share + "/t.html").read()
check(len(re.findall(r'<g class="s" [^>]*data-n="duty"', page)) >= 100,
      "--timeline draws duty's 100 spans")

plain = run("--stats", share + "/plain.opf")
check("Scheduler events" not in plain and "unknown type" not in plain,
      "a session without -e sched has no events")
check(re.search(r"flags 0x0\b", plain) is not None, "a session without -e sched has no flag")


# The checks can fail: a stream with one switch changed must make --stats exit 3 naming what.
def records(data):
    off = 0
    while off + 8 <= len(data):
        typ, _, ln = struct.unpack_from("<HHI", data, off)
        yield off, typ, ln
        off += ln


# A thread's repeated waits at one stack are OPF_SWITCH_SAME (18), read through the
# OPF_SWITCH before them (the views above): duty's 100 sleeps, lockpair's hundreds of waits.
n18 = sum(1 for off, typ, ln in records(open(sched, "rb").read()) if typ == 18)
check(n18 >= 100, f"{n18} waits written as OPF_SWITCH_SAME (at least 100)")


# (changed: a short switch, 17, which no OPF_SWITCH_SAME can refer to)
def corrupt(name, change):
    data = bytearray(open(sched, "rb").read())
    sw = [off for off, typ, ln in records(data) if typ == 17 and
          struct.unpack_from("<I", data, off + 16)[0] != 0]
    off = sw[len(sw) // 2]
    change(data, off)
    path = f"{share}/{name}.opf"
    open(path, "wb").write(data)
    return run("--stats", path, want_rc=3)


# OPF_SWITCH(_SHORT): h(8) core(2) why(2) nframes(2) pad(2) prev(4) next(4) tsc(8) prev_cpu(8)
out = corrupt("badprev", lambda d, o: struct.pack_into("<I", d, o + 16, 999999))
check(re.search(r"core \d+: \d+ switch\(es\) from a thread that was not running", out)
      is not None, "a switch from the wrong thread: --stats exits 3 naming the core")
out = corrupt("badcpu", lambda d, o: struct.pack_into(
    "<Q", d, o + 32, struct.unpack_from("<Q", d, o + 32)[0] + 1000000))
check(re.search(r"thread \d+ \(\S+\): \d+ switch-out\(s\) where the kernel's CPU time", out)
      is not None, "a switch whose CPU time disagrees: --stats exits 3 naming the thread")
out = corrupt("gone", lambda d, o: struct.pack_into("<H", d, o, 19))
check(re.search(r"core \d+: events taken \d+ != in stream", out) is not None,
      "an event missing from the stream: --stats exits 3 naming the core")

finish()
