#!/usr/bin/env python3
"""Host half of tests/t/sched-truth: the streams the guest wrote into SHARE, read by
user/opreport, must tell the truth (issue 34). One line per check; exit 1 if any failed.

  cap, flight  events lost (a 64 KiB cap) or overwritten (a flight recorder): part of the
               time is unknown -- a WARNING line in --wall, --offcpu, --locks, --thread, and on
               stderr for --timeline and --trace; per core busy + idle + unknown is the session;
               each thread's on-CPU share by the switches agrees with its samples' within their
               half-width (no thread is credited a gap: the audit saw 92% against 1%); --stats
               checks the rest (exit 0, nothing MISMATCH) and says how much is unknown.
  idle         core 1 never switches and idles: idle 100%, nothing unknown.
  spin         a thread that runs all session on core 1 without a switch: on its core 100%,
               its samples say so too (within their half-width, though core 1 missed
               periods), core 1 busy 100%, one trace span from start to end.
  many         four threads contend for one qlock and the session stops while they do:
               - each waiter's switch-out names the holder at that time: where the lock
                 changed hands (a contended acquisition by another) since its last switch-out,
                 the holder it names is that acquirer (90% at least: an uncontended
                 acquisition leaves no record); before the kernel's fix about two thirds
                 did (the first holder's turn often comes round again);
               - --locks lists every thread that waited (every thread --offcpu shows off for
                 the qlock), those still waiting at the end marked;
               - a wait inside a wait is counted once: --locks' total is the finished qlock
                 waits, the unfinished ones to the end, and the spins that are not inside a
                 qlock wait of their thread -- computed here from the records themselves;
               - the mutex profile (--locks --pprof) totals it.
  pair         nothing lost: --wall's on-cpu and samples agree within the samples' half-width
               for both lockpair threads and duty (1 ms on, 9 asleep, on the other core), so
               do --thread's share and on-cpu, and --stats' time checks pass.
  a, b, c, d   three runs each of one workload (a, b; d by scripts/profile -n 6, its
               sessions split here in two sides of three) and of another (c), compared with
               --no-idle (how long a run idles is how fast the host typed its commands: a
               waiting guest's clock jumps ahead under -icount, not the workload): --diff a b and
               --diff of d's two halves mark nothing with "*"; --diff a c marks the functions
               whose share changed (fib's and split's); the differential flame graph of a
               and b is all grey (within the noise), of a and c red and blue.
"""
import json
import os
import re
import struct
import subprocess
import sys

from checklines import check, finish

share = sys.argv[1]
top = __file__.rsplit("/tests/lib/", 1)[0]
opreport = top + "/user/opreport"
env = dict(os.environ, HOME=share)	# go tool pprof: a clean HOME


def run(*args, want_rc=0, err=False):
    p = subprocess.run([opreport, *args], capture_output=True, text=True, env=env)
    if p.returncode != want_rc:
        check(False, f"opreport {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout + (p.stderr if err else "")


def f(name):
    return f"{share}/{name}.opf"


def wall_rows(wall):
    """tid -> (name, core, life ms, on ms, on%, samples%, hw, unknown%)."""
    return {int(m[0]): (m[1], int(m[2]), float(m[3]), float(m[4]), float(m[5]), float(m[6]),
                        float(m[7]), float(m[8])) for m in re.findall(
        r"^ +(\d+) (\S+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)% +([\d.]+)% +([\d.]+) +"
        r"(?:[\d.]+% +){6}([\d.]+)% +[\d.-]+$", wall, re.M)}


def wall_cores(wall):
    """core -> (busy, idle, unknown) ms."""
    return {int(m[0]): (float(m[1]), float(m[2]), float(m[3])) for m in re.findall(
        r"^ +(\d+) +([\d.]+) +[\d.]+% +([\d.]+) +[\d.]+% +([\d.]+) +[\d.]+%$", wall, re.M)}


def session_ms(wall):
    return float(re.search(r"^Wall time per thread, session 1 \(([\d.]+) ms\)", wall, re.M)[1])


def agree(name, rows, slack=0.0):
    """Every thread's on-CPU share by the switches within its samples' half-width."""
    for tid, (nm, core, life, on, onp, smp, hw, unk) in rows.items():
        check(abs(onp - smp) <= hw + slack + 0.011,
              f"{name}: {nm} {tid} on a CPU {onp}% by the switches, {smp}% ± {hw} by samples")


def lossy(name, why):
    stream = f(name)
    wall = run("--wall", stream)
    print(wall)
    check(re.search(r"^WARNING: session 1: [\d.]+ of [\d.]+ ms of core time unknown \([\d.]+%\): "
                    r"no event covers it \(.*" + why, wall, re.M) is not None,
          f"{name}: --wall warns of the unknown time ({why})")
    cores, ms = wall_cores(wall), session_ms(wall)
    check(all(abs(sum(v) - ms) < 0.01 for v in cores.values()) and len(cores) == 2,
          f"{name}: per core, busy + idle + unknown is the session ({ms} ms): {cores}")
    check(sum(v[2] for v in cores.values()) > 0, f"{name}: some core time is unknown")
    rows = wall_rows(wall)
    check(len(rows) >= 2, f"{name}: --wall has its threads")
    agree(name, rows)
    for v in ("--offcpu", "--locks", "--thread"):
        check(re.search(r"^WARNING: session 1: .* of core time unknown", run(v, stream), re.M)
              is not None, f"{name}: {v} warns of the unknown time")
    out = run("--timeline", f"{share}/{name}.html", "--trace", f"{share}/{name}.json", stream,
              err=True)
    check(len(re.findall(r"warning: --(timeline|trace): session 1: .* unknown", out)) == 2,
          f"{name}: --timeline and --trace warn on stderr")
    ev = json.load(open(f"{share}/{name}.json"))["traceEvents"]
    unk = sum(e["dur"] for e in ev if e.get("cat") == "unknown") / 1e3
    check(abs(unk - sum(v[2] for v in cores.values())) < 0.01,
          f"{name}: the trace's unknown spans are --wall's unknown time ({unk:.3f} ms)")
    stats = run("--stats", stream)
    check("MISMATCH" not in stats and "agree with the switches: ok" in stats,
          f"{name}: --stats checks the known time, all ok")
    check(re.search(r"time checks: over the time the events cover; [\d.]+ ms of core time is "
                    r"unknown \([1-9]\d* events lost\)", stats) is not None,
          f"{name}: --stats says how much is unknown")


lossy("cap", "scheduler events lost: [^)]*output queue full")
lossy("flight", "overwritten")

# idle: core 1 never switches and idles
wall = run("--wall", f("idle"))
c = wall_cores(wall)
check(c.get(1, (1, 0, 1))[0] < session_ms(wall) / 100 and c[1][2] == 0 and
      c[1][1] > 0.99 * session_ms(wall), f"idle: core 1 idles all session, nothing unknown: {c.get(1)}")
check("WARNING" not in wall, "idle: nothing to warn of")

# spin: on core 1 throughout, without a switch
wall = run("--wall", f("spin"))
print(wall)
spin = [r for r in wall_rows(wall).values() if r[0] == "spin"]
agree("spin", {t: r for t, r in wall_rows(wall).items() if r[0] == "spin"})
check(len(spin) == 1 and spin[0][1] == 1 and spin[0][4] == 100.0 and spin[0][7] == 0,
      f"spin: on core 1 100% of the session, nothing unknown: {spin}")
c = wall_cores(wall)
check(abs(c.get(1, (0,))[0] - session_ms(wall)) < 0.01, f"spin: core 1 busy 100%: {c.get(1)}")
run("--trace", f"{share}/spin.json", f("spin"))
ev = json.load(open(f"{share}/spin.json"))["traceEvents"]
x = [(e["name"], e["ts"], e["dur"]) for e in ev if e["ph"] == "X" and e["tid"] == 1]
check(len(x) == 1 and x[0][0].startswith("spin (tid ") and x[0][1] == 0 and
      abs(x[0][2] / 1e3 - session_ms(wall)) < 0.002, f"spin: one trace span on core 1, start to end: {x}")


# many: the records themselves
def records(path):
    data, off, seq = open(path, "rb").read(), 0, 0
    while off + 8 <= len(data):
        typ, fl, ln = struct.unpack_from("<HHI", data, off)
        yield typ, data[off:off + ln], seq
        off += ln
        seq += 1


sw, acq, spins, last_full, end = [], [], [], {}, 0
for typ, r, seq in records(f("many")):
    if typ == 11:
        last_full = {}
    if typ in (13, 17, 18):
        core, why = struct.unpack_from("<HH", r, 8)
        prev, nxt, tsc = struct.unpack_from("<IIQ", r, 16)
        holder = obj = None
        if typ == 13:
            obj, holder = struct.unpack_from("<QQI", r, 40)[0], struct.unpack_from("<I", r, 56)[0]
            last_full[prev] = (obj, holder)
        elif typ == 18:
            obj, holder = last_full.get(prev, (None, None))
        sw.append((tsc, seq, prev, nxt, why, obj, holder))
        end = max(end, tsc)
    if typ == 15:
        core, kind = struct.unpack_from("<HH", r, 8)
        tid, holder, tsc, wait, lock = struct.unpack_from("<IIQQQ", r, 16)
        (acq if kind == 0 else spins).append((tsc, seq, tid, holder, wait, lock))
sw.sort()
acq.sort()
qsw = [s for s in sw if s[4] == 4]
check(len(qsw) > 20 and len(acq) > 10, f"many: {len(qsw)} qlock switch-outs, {len(acq)} contended "
      "acquisitions")
# each switch-out where the lock changed hands since the waiter's last one: that holder
changed = named = 0
lastout = {}
for tsc, seq, prev, nxt, why, obj, holder in qsw:
    before = [a for a in acq if a[0] < tsc and a[2] != prev and a[5] == obj]
    if before and prev in lastout and before[-1][0] > lastout[prev]:
        changed += 1
        named += holder == before[-1][2]
    lastout[prev] = tsc
check(changed >= 10 and named >= 0.9 * changed,
      f"many: of {changed} switch-outs after the lock changed hands, {named} name the new holder")

locks = run("--locks", f("many"))
print(locks)
offcpu = run("--offcpu", f("many"))
off_tids = set(int(t) for t in re.findall(r" qlock lockpair +(\d+) ", offcpu))
m = re.search(r"^  lockpair +qlock .*\n.*\n +waiters: (.*)$", locks, re.M)
waiters = set(int(t) for t in re.findall(r"tid (\d+)", m[1])) if m else set()
check(len(off_tids) == 4 and waiters == off_tids,
      f"many: --locks lists every thread --offcpu shows off for the qlock: {waiters} / {off_tids}")
check(m is not None and "(not finished by the end)" in m[1],
      "many: a wait still going at the end is listed, marked")
# the total, independently: finished qlock waits + unfinished ones to the end + the spins
# no qlock wait of their thread holds
hz = struct.unpack_from("<Q", open(f("many"), "rb").read(), 32)[0]
waits = {}
for tsc, seq, tid, holder, wait, lock in acq:
    waits.setdefault(tid, []).append((tsc - wait, tsc))
for tid in set(s[2] for s in qsw):
    outs = [s for s in qsw if s[2] == tid]
    done = [w for w in waits.get(tid, []) if w[1] >= outs[-1][0]]
    if not done:	# still waiting at the end: from the switch-in before its first sleep
        first = [s for s in outs if not any(a <= s[0] <= b for a, b in waits.get(tid, []))][0]
        ins = [s[0] for s in sw if s[3] == tid and s[0] < first[0]]
        waits.setdefault(tid, []).append((ins[-1] if ins else 0, None))
total = 0.0
for tid, ws in waits.items():
    total += sum(((b if b else end) - a) for a, b in ws if a)
outside = [w for w in spins if not any(a <= w[0] - w[4] and w[0] <= (b or end)
                                       for a, b in waits.get(w[2], []) if a)]
total += sum(w[4] for w in outside)
m = re.search(r"^Lock waits, session 1: \d+ waits \(\d+ not finished by the end\) for \d+ locks, "
              r"([\d.]+) ms in all", locks, re.M)
check(m is not None and abs(float(m[1]) - total * 1e3 / hz) < 0.05,
      f"many: --locks' total {m and m[1]} ms is every wait once: {total * 1e3 / hz:.3f} ms "
      f"({len(spins) - len(outside)} spins inside qlock waits not added)")
run("--locks", "--pprof", f"{share}/mutex.pb.gz", f("many"))
p = subprocess.run(["go", "tool", "pprof", "-top", "-unit=us", "-sample_index=delay",
                    f"{share}/mutex.pb.gz"], capture_output=True, text=True, env=env)
t = re.search(r"Total samples = ([\d.]+)(us)?", p.stdout + p.stderr)
check(t is not None and m is not None and abs(float(t[1]) / 1e3 - float(m[1])) < 0.05,
      f"many: the mutex profile's total {t and t[1]} us is --locks' {m and m[1]} ms")
stats = run("--stats", f("many"))
check("MISMATCH" not in stats, "many: --stats ok")

# pair: nothing lost
wall = run("--wall", f("pair"))
print(wall)
rows = wall_rows(wall)
pair = [r for r in rows.values() if r[0] == "lockpair"]
check(len(pair) == 2, "pair: two lockpair threads")
agree("pair", {t: r for t, r in rows.items() if r[0] in ("lockpair", "duty")})
duty = [r for r in rows.values() if r[0] == "duty"]
check(len(duty) == 1 and duty[0][4] > 3, f"pair: duty on a CPU a part of its time: {duty}")
thr = run("--thread", f("pair"))
print(thr)
seen = set()
for tid, pc, hw, on, nm in [(int(m[2]), float(m[0]), float(m[1]), float(m[3]), m[4]) for m in
                            re.findall(r"^ +\d+ +([\d.]+)% +([\d.]+) +(\d+) +([\d.]+)%  "
                                       r"(lockpair|duty)$", thr, re.M)]:
    seen.add(nm)
    check(abs(pc - on) <= hw + 0.011, f"pair: --thread {nm} {tid}: {pc}% ± {hw} of the "
          f"periods, on a CPU {on}% by the switches")
check("duty" in seen, "pair: --thread has duty, with its on-cpu")
stats = run("--stats", f("pair"))
check("agree with the switches: ok" in stats and "MISMATCH" not in stats and
      "time checks: over the time the events cover" not in stats, "pair: --stats time checks ok, "
      "nothing unknown")

# --diff: the same workload marks nothing, another marks what changed
same = run("--diff", "--no-idle", f("a"), f("b"))
print(same)
check(re.search(r"\(0 of \d+ functions\)", same) is not None and "3 runs" in same,
      "a, b: three runs each of one workload: --diff marks nothing")
other = run("--diff", "--no-idle", f("a"), f("c"))
print(other)
marked = set(re.findall(r"^ .*\*  (\S+)$", other, re.M))
check("fib" in marked and any(m.startswith("split_") for m in marked),
      f"a, c: --diff marks fib, and split's functions: {marked}")


def fills(svg):
    """The differential flame graph's frame colours: grey within the noise, else red or blue."""
    run("--diff", "--no-idle", "--flame", f"{share}/{svg}.svg", *(f(x) for x in svg))
    c = set(re.findall(r'<rect [^>]*rx="2" fill="rgb\((\d+),(\d+),(\d+)\)"',
                       open(f"{share}/{svg}.svg").read()))
    return {"grey" if c == ("225", "225", "225") else "red" if c[0] == "250" else
            "blue" if c[2] == "250" else "other" for c in c}


ab, ac = fills("ab"), fills("ac")
check(ab == {"grey"}, f"a, b: the differential flame graph paints nothing red or blue: {ab}")
check({"red", "blue"} <= ac, f"a, c: the differential flame graph paints fib red and split blue: {ac}")
d = run(f("d"))
check(re.search(r"^Sessions: +6$", d, re.M) is not None, "d: scripts/profile -n 6 wrote 6 sessions")
data, starts = open(f("d"), "rb").read(), []
for typ, r, seq in records(f("d")):
    pass
off = 0
while off + 8 <= len(data):
    typ, _, ln = struct.unpack_from("<HHI", data, off)
    starts.append(off) if typ == 1 else None
    off += ln
starts.append(len(data))
for i in range(6):
    open(f"{share}/d{i}.opf", "wb").write(data[starts[i]:starts[i + 1]])
dd = run("--diff", "--no-idle", *[f(f"d{i}") for i in (0, 2, 4)], "--", *[f(f"d{i}") for i in (1, 3, 5)])
print(dd)
check(re.search(r"^New: .*d1.opf, .*d3.opf, .*d5.opf: \d+ periods, \d+ samples, 3 runs", dd, re.M)
      is not None and re.search(r"\(0 of \d+ functions\)", dd) is not None,
      "d: the -n 6 profile's runs, three against three: --diff marks nothing")
finish(f" (streams in {share})")
