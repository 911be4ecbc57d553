#!/usr/bin/env python3
# Structure check for C sources, run by tests/t/opreport-structure:
#	funclen.py [--length-only] MAX FILE...
# Prints each function's length (lines from its opening "{" to its closing "}", both at column
# 0 as our style writes them) as "LINES FILE:LINE NAME", longest first, and fails (exit 1)
# when one is longer than MAX lines, or (unless --length-only: the kernel's files open with
# their design instead) when a file does not open with a comment that names it
# ("/*\n * NAME.c: what it is ...") or, for a .c file, one that says who calls it.
import re
import sys

args = sys.argv[1:]
headers = not (args and args[0] == "--length-only")
args = args if headers else args[1:]
limit, files = int(args[0]), args[1:]
rows, bad = [], []
for path in files:
    lines = open(path).read().split("\n")
    base = path.rsplit("/", 1)[-1]
    head = "\n".join(lines[:12])
    if not headers:
        pass
    elif not re.match(r"/\*\n \* " + re.escape(base) + r": ", head) and \
            not head.startswith("/* " + base + ": "):
        bad.append("%s: does not open with a comment naming it (/*\\n * %s: ...)" % (path, base))
    elif base.endswith(".c") and not re.search(r"call|run by|used by|given to|read by", head,
                                                re.I):
        bad.append("%s: its opening comment does not say who calls it" % path)
    start = None
    for i, l in enumerate(lines):
        if l == "{":
            start = i
            # the name: the last identifier before "(" on the lines of the signature above
            sig = " ".join(lines[max(0, i - 4):i])
            names = re.findall(r"(\w+)\s*\(", sig)
            name = names[-1] if names else "?"
        elif l == "}" and start is not None:
            rows.append((i - start + 1, "%s:%d" % (path, start), name))
            start = None
rows.sort(reverse=True)
for n, where, name in rows[:10]:
    print("%4d %s %s" % (n, where, name))
for n, where, name in rows:
    if n > limit:
        bad.append("%s %s: %d lines (limit: %d)" % (where, name, n, limit))
for b in bad:
    print("FAIL " + b)
print("%d functions in %d files, longest %d lines" % (len(rows), len(files), rows[0][0] if rows else 0))
sys.exit(1 if bad else 0)
