# gdb -batch -x tests/bench/istep.py, run by overhead.sh: attached to QEMU's gdb stub
# (ISTEP_PORT) while the guest samples, single-step ISTEP_N whole timer interrupts, each
# from its entry (timer_entry, or trap_common in kernels without one) to its iretq, and write one line per interrupt to ISTEP_OUT: the number
# of instructions, then "function:count" for every function the instructions belong to
# (the innermost, inlined functions by their own names, from the DWARF line table).
# ISTEP_PCS=FILE also writes the fewest-instruction interrupt's addresses there, one a line
# with its function and disassembly, to read what each instruction is for.
import bisect
import collections
import os
import subprocess

import gdb

elf = os.environ["ISTEP_ELF"]
gdb.execute("set pagination off")
gdb.execute("file " + elf)
gdb.execute("target remote localhost:" + os.environ["ISTEP_PORT"])
nm = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout.split()
# ISTEP_BREAK: another entry to step from (nmistep.sh: the NMI's vector stub)
gdb.execute("hbreak " + os.environ.get("ISTEP_BREAK",
                                       "timer_entry" if "timer_entry" in nm else "trap_common"))
runs = []
for _ in range(int(os.environ.get("ISTEP_N", "8"))):
    # Stepping one interrupt holds the machine for a second of host time, which the guest's
    # clock partly sees: the next interrupts catch up on alarms (the scheduler's tick) that
    # fell due meanwhile. Let 20 interrupts pass before the next one stepped.
    if runs:
        gdb.execute("ignore 1 20", to_string=True)
    gdb.execute("continue", to_string=True)
    pcs = []
    while len(pcs) < 5000:  # a sample is under 3000; past this it switched threads
        pc = int(gdb.parse_and_eval("$pc")) & 0xFFFFFFFFFFFFFFFF
        pcs.append(pc)
        if bytes(gdb.selected_inferior().read_memory(pc, 2)) == b"\x48\xcf":  # iretq
            break
        gdb.execute("stepi", to_string=True)
    runs.append(pcs)
gdb.execute("delete")
gdb.execute("detach")

# assembly has no DWARF lines: name it by the symbol table
syms = []
for line in subprocess.run(["nm", "-n", elf], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 3 and f[1] in "tTwW":
        syms.append((int(f[0], 16), f[2]))
starts = [a for a, _ in syms]

with open(os.environ["ISTEP_OUT"], "w") as out:
    for pcs in runs:
        names = subprocess.run(["addr2line", "-f", "-e", elf] + ["%x" % p for p in pcs],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        fns = [n if n != "??" else syms[bisect.bisect_right(starts, pc) - 1][1]
               for n, pc in zip(names[0::2], pcs)]
        count = collections.Counter(fns)
        out.write("%d %s\n" % (len(pcs), " ".join("%s:%d" % kv for kv in count.most_common())))

if os.environ.get("ISTEP_PCS"):
    pcs = min(runs, key=len)
    dis = {}
    for line in subprocess.run(["objdump", "-d", "--no-show-raw-insn", elf], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        f = line.split(":", 1)
        if len(f) == 2 and f[0].strip() and all(c in "0123456789abcdef" for c in f[0].strip()):
            dis[int(f[0], 16)] = " ".join(f[1].split())
    names = subprocess.run(["addr2line", "-f", "-e", elf] + ["%x" % p for p in pcs],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    with open(os.environ["ISTEP_PCS"], "w") as out:
        for pc, fn in zip(pcs, names[0::2]):
            if fn == "??":
                fn = syms[bisect.bisect_right(starts, pc) - 1][1]
            out.write("%x %s %s\n" % (pc, fn, dis.get(pc, "?")))
