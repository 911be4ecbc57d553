#!/usr/bin/env python3
"""streamorder.py FILE: check the order of a profiler stream, apart from opreport.

Per core, in stream order: every record that carries a time (samples, OPF_LOST,
OPF_THROTTLE, OPF_PAUSE, OPF_RESUME) is no earlier than the one before it; the core's
pause and resume marks alternate, starting with a pause; and no sample of the core lies
between its pause and its resume. Prints one line of counts; exits 1 with the first
problem found. Knows format 2 (docs/FORMAT.md), and nothing more than this needs.
"""
import struct
import sys

SESSION, SAMPLE, THREAD, LOST, CORE_END, SESSION_END, THROTTLE, SNAPSHOT, PAUSE, RESUME = \
    range(1, 11)


def main(path):
    data = open(path, "rb").read()
    off, last, paused = 0, {}, {}
    counts = {"samples": 0, "pauses": 0, "resumes": 0}
    while off + 8 <= len(data):
        rtype, _, rlen = struct.unpack_from("<HHI", data, off)
        if rlen < 8 or off + rlen > len(data):
            return f"offset {off}: bad record length {rlen}"
        core = tsc = None
        if rtype == SAMPLE:
            core, _, _, tsc = struct.unpack_from("<HHIQ", data, off + 8)
            counts["samples"] += 1
            if paused.get(core):
                return f"offset {off}: a sample of core {core} while it was paused"
        elif rtype == LOST:
            core, _, _, _, tsc = struct.unpack_from("<HHIQQ", data, off + 8)
        elif rtype == THROTTLE:
            core, _, tsc = struct.unpack_from("<IIQ", data, off + 8)
        elif rtype in (PAUSE, RESUME) and rlen >= 24:
            tsc, core = struct.unpack_from("<QI", data, off + 8)
            want = rtype == RESUME
            if bool(paused.get(core)) != want:
                return f"offset {off}: core {core}: a {'resume' if want else 'pause'} out of turn"
            paused[core] = not want
            counts["resumes" if want else "pauses"] += 1
        if core is not None:
            if tsc < last.get(core, 0):
                return f"offset {off}: core {core}: time {tsc} before {last[core]}"
            last[core] = tsc
        off += rlen
    print(f"streamorder: {counts['samples']} samples, {counts['pauses']} pause and "
          f"{counts['resumes']} resume marks on {len(last)} cores, in time order per core")
    return None


if __name__ == "__main__":
    err = main(sys.argv[1])
    if err:
        print(f"streamorder: {sys.argv[1]}: {err}")
        sys.exit(1)
