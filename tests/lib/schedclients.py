#!/usr/bin/env python3
"""Host half of tests/t/sched-clients: the real clients read opreport's exports of a stream
with scheduler events (SHARE/sched.opf) and agree with opreport's own views. Every client
runs from a clean HOME (no pprof or perf settings, no build-id cache). Prints one line per
check; exits 1 naming every check that failed.

  go tool pprof (Debian's golang)  --locks --pprof: sample types contentions/count and
      delay/nanoseconds; contentions equal --locks' count, delay its total wait (each wait
      rounds to the microsecond: within 0.5 us a wait, + 1 us of display). --offcpu --pprof:
      delay is --offcpu's total to 0.1%; the reasons are the roots ([sleep], [qlock ...]).
  perf sched timehist (Debian's perf)  on --perf-data: per thread that began in the session,
      run time (-s) equals --wall's on-CPU ms within 0.01 ms + 0.1% (nanoseconds vs TSC
      ticks), and its wait times (switch-out to switch-in, summed from rows of 1 us
      precision) the rest of its life less its first scheduling delay (creation to first
      run, which timehist does not count as waiting), within 1% of its life.
  perf sched latency: lists the workload threads with as many switches as timehist's
      sched-in count, and duty's runtime (sched_stat_runtime) as --wall's on-CPU time to
      0.01 ms + 0.1%; perf timechart draws them.
  hotspot-perfparser (hotspot's parser) on --perf-data: no warning, and its events replayed
      as hotspot replays them (tests/lib/hotspot_offcpu.py) give --offcpu's off-CPU events
      and time in all and per function.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checklines import check, finish

share = sys.argv[1]
top = __file__.rsplit("/tests/lib/", 1)[0]
opreport = top + "/user/opreport"
stream = share + "/sched.opf"
home = tempfile.mkdtemp(prefix="sched-clients-home.")
env = dict(os.environ, HOME=home, PPROF_TMPDIR=home, PERF_BUILDID_DIR=home + "/.debug")


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        check(False, f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def pprof_total(path, index):
    out = run("go", "tool", "pprof", "-top", "-unit=us", "-sample_index=" + index, path)
    m = re.search(r"Total samples = (\d+)(us)?", out)
    check(m is not None, f"pprof -top -sample_index={index} prints a total")
    return (int(m.group(1)) if m else -1), out


def locks():
    out = run(opreport, "--locks", stream)
    # lock kind waits not-done total-ms max-ms mean-ms: waits inside others are in no row
    rows = re.findall(r"^  (\S+)\s+(qlock|spin)\s+(\d+)\s+\d+\s+([\d.]+)\s", out, re.M)
    count = sum(int(r[2]) for r in rows)
    wait_us = sum(float(r[3]) for r in rows) * 1000
    check(count > 0, f"--locks: {count} contentions, {wait_us / 1000:.3f} ms")
    pb = home + "/locks.pb.gz"
    run(opreport, "--locks", "--pprof", pb, stream)
    types = run("go", "tool", "pprof", "-raw", pb)
    check("contentions/count delay/nanoseconds" in types,
          "pprof: sample types contentions/count delay/nanoseconds")
    n, _ = pprof_total(pb, "contentions")
    check(n == count, f"pprof contentions {n} == --locks {count}")
    d, top = pprof_total(pb, "delay")
    check(abs(d - wait_us) <= 0.5 * count + 1,
          f"pprof delay {d} us == --locks {wait_us:.0f} us (0.5 us a wait)")
    check("[qlock lockpair]" in top, "pprof: [qlock lockpair] is a root")


def offcpu():
    out = run(opreport, "--offcpu", stream)
    m = re.search(r"\(([\d.]+) ms in all", out)
    all_us = float(m.group(1)) * 1000 if m else -1
    pb = home + "/off.pb.gz"
    run(opreport, "--offcpu", "--pprof", pb, stream)
    d, top = pprof_total(pb, "delay")
    check(abs(d - all_us) <= 0.001 * all_us + 1,
          f"pprof off-CPU delay {d} us == --offcpu {all_us:.0f} us (0.1%)")
    check("[sleep]" in top, "pprof: [sleep] is a root")


def wall():
    """--wall per thread: tid -> (name, time ms, on ms)."""
    out = run(opreport, "--wall", stream)
    return {int(t): (n, float(tm), float(on)) for t, n, tm, on in re.findall(
        r"^\s+(\d+) (\S+)\s+\d+\s+([\d.]+)\s+([\d.]+)\s", out, re.M)}


def timehist(data):
    """perf sched timehist: tid -> [run ms (its summary), wait ms, sched-ins, first delay]."""
    out = run("perf", "sched", "timehist", "-i", data)
    th = {}
    for tid, wait, delay in re.findall(
            r"^\s+[\d.]+ \[\d+\]\s+\S+?\[(\d+)\]\s+([\d.]+)\s+([\d.]+)\s+[\d.]+", out, re.M):
        r = th.setdefault(int(tid), [0.0, 0.0, 0, float(delay)])
        r[1] += float(wait)
        r[2] += 1
    summary = run("perf", "sched", "timehist", "-s", "-i", data)
    for tid, ins, run_ms in re.findall(r"^\s+\S+?\[(\d+)\]\s+\S+\s+(\d+)\s+([\d.]+)\s", summary,
                                       re.M):
        if int(tid) in th:
            th[int(tid)][0] = float(run_ms)
            check(int(ins) == th[int(tid)][2], f"timehist -s: tid {tid} sched-in {ins} times")
    return th


def perf():
    data = home + "/perf.data"
    run(opreport, "--no-buildid-cache", "--perf-data", data, stream)
    w = wall()
    th = timehist(data)
    created = {}	# tid -> its first switch-in as ms since the session start
    lat = run("perf", "sched", "latency", "-i", data)
    for tid, (name, life, on) in sorted(w.items()):
        if name not in ("duty", "lockpair") or tid not in th:
            continue
        run_ms, wait_ms, ins, first = th[tid]
        check(abs(run_ms - on) <= 0.01 + 0.001 * on,
              f"timehist: {name} {tid} ran {run_ms:.3f} ms == --wall on-CPU {on:.3f} ms")
        check(abs(wait_ms - (life - on - first)) <= 0.01 * life,
              f"timehist: {name} {tid} waited {wait_ms:.3f} ms == --wall off-CPU "
              f"{life - on:.3f} ms less {first:.3f} before its first run (1% of its life)")
        created[tid] = ins
    check(len(created) == 3, f"timehist shows duty and both lockpairs ({len(created)} threads)")
    m = re.search(r"^\s+duty:(\d+)\s+\|\s+([\d.]+) ms \|\s+(\d+) \|", lat, re.M)
    check(m is not None and int(m.group(3)) == created.get(int(m.group(1)), -1),
          "perf sched latency: duty's switches == timehist's sched-ins")
    on = w.get(int(m.group(1)), ("", 0, -1))[2] if m else -1
    check(m is not None and abs(float(m.group(2)) - on) <= 0.01 + 0.001 * on,
          f"perf sched latency: duty's runtime {m.group(2) if m else '?'} ms == --wall "
          f"on-CPU {on:.3f} ms")
    svg = home + "/timechart.svg"
    run("perf", "timechart", "-i", data, "-o", svg)
    text = open(svg).read() if os.path.exists(svg) else ""
    check("duty" in text and "lockpair" in text, "perf timechart draws duty and lockpair")


def hotspot():
    data = home + "/hotspot.data"
    run(opreport, "--perf-data", data, stream)	# kernel and kallsyms into the cache
    pp = home + "/hotspot.pp"
    err = run("/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser", "--input", data,
              "--output", pp)
    check(err == "", "hotspot-perfparser converts --perf-data without a warning " + err)
    views = {"offcpu.txt": [], "folded.us": ["--folded"],
             "folded.n": ["--folded", "--weight", "samples"]}
    for name, opts in views.items():	# stdout only: a warning is no stack
        p = subprocess.run([opreport, "--offcpu", *opts, stream], capture_output=True,
                           text=True, env=env)
        check(p.returncode == 0, f"opreport --offcpu {' '.join(opts)}: exit {p.returncode}")
        with open(home + "/" + name, "w") as f:
            f.write(p.stdout)
    out = run("python3", top + "/tests/lib/hotspot_offcpu.py", pp,
              *(home + "/" + n for n in views))
    print(out, end="")


locks()
offcpu()
perf()
hotspot()
finish(f" (their files are in {home})")
shutil.rmtree(home)
