# gdb -batch -x tests/bench/swstep.py: attached to QEMU's gdb stub (ISTEP_PORT) while two
# `run yield` threads switch on one core with "oprofile start -e sched", single-step six
# whole switch events (switch_event, or ISTEP_FN -- thread_wake for the wakers -- from its
# first instruction to its return; 50 calls apart) and write one line each to ISTEP_OUT: the instructions, then "function:count" by
# the symbol each instruction lies in (inlined code counts for its caller); with ISTEP_LINES,
# the same runs by source line into that file. How
# tests/bench/schedcost.sh's reading of where a switch's instructions go was obtained:
#   kern> cat /dev/oprofile > /dev/null &
#   kern> oprofile start -m timer -f 100 -d 16 -e sched
#   kern> run yield -c 0 -t 3 &
#   kern> run yield -c 0 -t 2          (then attach: ISTEP_ELF=build/kernel.elf gdb -x ...)
import bisect
import collections
import os
import subprocess

import gdb
elf = os.environ["ISTEP_ELF"]
gdb.execute("set pagination off")
gdb.execute("file " + elf)
gdb.execute("target remote localhost:" + os.environ["ISTEP_PORT"])
gdb.execute("hbreak " + os.environ.get("ISTEP_FN", "switch_event"))
runs = []
for i in range(6):
    if runs:
        gdb.execute("ignore 1 50", to_string=True)
    gdb.execute("continue", to_string=True)
    rsp = int(gdb.parse_and_eval("$sp")) & 0xFFFFFFFFFFFFFFFF
    ret = int(gdb.parse_and_eval("*(unsigned long *)$sp")) & 0xFFFFFFFFFFFFFFFF
    pcs = []
    while len(pcs) < 20000:
        pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF
        if pc == ret:
            break
        pcs.append(pc)
        gdb.execute("stepi", to_string=True)
    runs.append(pcs)
gdb.execute("delete")
gdb.execute("detach")
syms = []
for line in subprocess.run(["nm", "-n", elf], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
starts = [a for a, _ in syms]
with open(os.environ["ISTEP_OUT"], "w") as out:
    for pcs in runs:
        fns = [syms[bisect.bisect_right(starts, pc) - 1][1] for pc in pcs]
        count = collections.Counter(fns)
        out.write("%d %s\n" % (len(pcs), " ".join("%s:%d" % kv for kv in count.most_common())))
# ISTEP_LINES: the same runs by source line (the innermost inlined one), "file:line:count"
if os.environ.get("ISTEP_LINES"):
    uniq = sorted({pc for pcs in runs for pc in pcs})
    a2l = subprocess.run(["addr2line", "-e", elf] + ["%x" % pc for pc in uniq],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    where = {pc: a2l[i].rsplit("/", 1)[-1].split(" ")[0] for i, pc in enumerate(uniq)}
    with open(os.environ["ISTEP_LINES"], "w") as out:
        for pcs in runs:
            count = collections.Counter(where[pc] for pc in pcs)
            out.write("%d %s\n" % (len(pcs), " ".join("%s:%d" % kv for kv in count.most_common())))
