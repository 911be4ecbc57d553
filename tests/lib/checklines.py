"""checklines.py: the verdict lines of the host-side checkers (schedcheck, schedclients,
iowaitcheck, wakefoldcheck, run by their tests in tests/t): one "ok"/"FAIL" line per check,
and at the end an exit that says how many failed."""
import sys

failed = []


def check(ok, what):
    """One check's line; a failed one is remembered for finish()."""
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def finish(where=""):
    """Exit 1 saying how many checks failed (and where their files are), if any did."""
    if failed:
        print(f"{len(failed)} check(s) failed{where}")
        sys.exit(1)
