#!/usr/bin/env python3
# The host tools' stages, run by tests/t/opreport-structure (README, "Layout"):
#	stages.py [ROOT]	(ROOT: the folder of opreport.c, default user)
# ROOT's folders are the stages the data flows through, bottom up: util/ (helpers), ingest/
# (the stream into a profile), model/ (what is derived from it), then text/ and export/ side
# by side (export/perf/ is part of export/), and opreport.c, the entry, on top. Checked:
#   - every .c and .h under ROOT is in a stage;
#   - a file includes headers of its own stage and the stages below it only, each named by
#     its path from ROOT ("model/ctx.h"), or the kernel's ABI ("abi/...");
#   - the same for the names it uses: a function or variable another .c defines, a type,
#     enum constant, macro or inline function another header defines (a header that only
#     declares another file's function does not use it: the files that call it do);
#   - no files depend on each other in a circle. A .c and the .h of the same name are one
#     unit; A depends on B when A includes B's header or uses a name B defines.
# Prints each problem (a circle as "a -> b -> a", with the names that tie each step) and
# exits 1 if there is any, else prints the units and stages it checked and exits 0.
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "user"
RANK = {"util": 0, "ingest": 1, "model": 2, "text": 3, "export": 3, "": 4}
STAGE_OF_ENTRY = {"opreport.c": ""}	# the entry, in ROOT itself

NOT_GLOBALS = ("static", "struct", "union", "enum", "typedef", "#", " ", "\t")
KEYWORDS = set("""auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Static_assert""".split())


def strip(text):
	"""text without comments, string and character literals (kept: line breaks)."""
	out, i, n = [], 0, len(text)
	while i < n:
		c = text[i]
		if text.startswith("/*", i):
			j = text.find("*/", i + 2)
			j = n if j < 0 else j + 2
			out.append("\n" * text.count("\n", i, j))
			i = j
		elif text.startswith("//", i):
			j = text.find("\n", i)
			i = n if j < 0 else j
		elif c in "\"'":
			j = i + 1
			while j < n and text[j] != c:
				j += 2 if text[j] == "\\" else 1
			out.append(" ")
			i = j + 1
		else:
			out.append(c)
			i += 1
	return "".join(out)


def stage(rel):
	if rel in STAGE_OF_ENTRY:
		return STAGE_OF_ENTRY[rel]
	top = rel.split("/")[0] if "/" in rel else None
	return top if top in RANK else None


def may_use(user, used):
	return user == used or RANK[used] < RANK[user]


def where(user, used):
	return "above" if RANK[used] > RANK[user] else "beside"


def definitions(rel, code):
	"""The names file rel defines for others: {name: kind}."""
	names = {}
	lines = code.split("\n")
	if rel.endswith(".h"):
		for m in re.finditer(r"^\s*#\s*define\s+(\w+)", code, re.M):
			names[m.group(1)] = "macro"
		for m in re.finditer(r"\b(struct|union|enum)\s+(\w+)\s*\{", code):
			names[m.group(1) + " " + m.group(2)] = "type"
		for m in re.finditer(r"\benum\s*(\w*)\s*\{([^}]*)\}", code):
			for c in re.finditer(r"(?:^|,)\s*(\w+)", m.group(2)):
				names[c.group(1)] = "enum constant"
		for m in re.finditer(r"\btypedef\b[^;]*?\b(\w+)\s*(?:\)\s*\([^;]*\))?\s*;", code):
			names[m.group(1)] = "type"
		inline = r"^static\s+inline\b[^;{]*?\b(\w+)\s*\([^;]*?\)\s*\{"
		for m in re.finditer(inline, code, re.M):
			names[m.group(1)] = "inline function"
		return names
	depth = 0
	for i, l in enumerate(lines):
		if depth == 0 and l == "{":
			sig = " ".join(lines[max(0, i - 4):i])
			sig = sig.split(";")[-1].split("}")[-1]
			m = re.findall(r"(\w+)\s*\(", sig)
			if m and not re.search(r"\bstatic\b", sig):
				names[m[-1]] = "function"
		elif depth == 0 and not l.startswith(NOT_GLOBALS):
			m = re.match(r"[\w\s\*]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*=", l)
			if m and m.group(1) not in KEYWORDS:
				names[m.group(1)] = "variable"
		depth += l.count("{") - l.count("}")
	return names


def uses(code):
	"""The names a file's code mentions: identifiers, and "struct X" for tags."""
	found = set(re.findall(r"\b[A-Za-z_]\w*\b", code))
	found |= {m.group(1) + " " + m.group(2)
		  for m in re.finditer(r"\b(struct|union|enum)\s+(\w+)", code)}
	return found


def unit(rel):
	return rel[:-2]


def find_cycles(graph):
	"""Strongly connected components of more than one unit (Tarjan)."""
	index, low, onstack, stack, comps, counter = {}, {}, set(), [], [], [0]

	def visit(v):
		index[v] = low[v] = counter[0]
		counter[0] += 1
		stack.append(v)
		onstack.add(v)
		for w in sorted(graph.get(v, ())):
			if w not in index:
				visit(w)
				low[v] = min(low[v], low[w])
			elif w in onstack:
				low[v] = min(low[v], index[w])
		if low[v] == index[v]:
			comp = []
			while True:
				w = stack.pop()
				onstack.discard(w)
				comp.append(w)
				if w == v:
					break
			if len(comp) > 1:
				comps.append(sorted(comp))

	sys.setrecursionlimit(10000)
	for v in sorted(graph):
		if v not in index:
			visit(v)
	return comps


def circle_in(comp, graph):
	"""One circle through comp's first unit, as a list of units ending where it began."""
	start, inside = comp[0], set(comp)
	prev, frontier = {start: None}, [start]
	while frontier:
		nxt = []
		for v in frontier:
			for w in sorted(graph[v]):
				if w == start:
					path = [v]
					while prev[path[-1]] is not None:
						path.append(prev[path[-1]])
					return list(reversed(path)) + [start]
				if w in inside and w not in prev:
					prev[w] = v
					nxt.append(w)
		frontier = nxt
	return comp + [start]


def main():
	files = sorted(os.path.relpath(os.path.join(d, f), ROOT)
		       for d, ds, fs in os.walk(ROOT)
		       if "build" not in os.path.relpath(d, ROOT).split(os.sep)
		       for f in fs if f.endswith((".c", ".h")))
	if "opreport.c" not in files:
		print(f"FAIL: no {ROOT}/opreport.c: not the host tools' folder")
		return 1
	bad, code = [], {}
	for rel in files:
		if stage(rel) is None:
			bad.append(f"{rel}: in no stage's folder ({', '.join(sorted(RANK)[1:])})")
		code[rel] = strip(open(os.path.join(ROOT, rel)).read())
	defs, kinds = {}, {}	# name -> the units defining it, and what it is
	for rel in files:
		for name, kind in definitions(rel, code[rel]).items():
			defs.setdefault(name, set()).add(unit(rel))
			kinds[name] = kind
	graph, why = {unit(r): set() for r in files}, {}
	for rel in files:
		u, st = unit(rel), stage(rel)
		raw = open(os.path.join(ROOT, rel)).read()
		for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', raw, re.M):
			if inc.startswith("abi/"):
				continue
			if not os.path.exists(os.path.join(ROOT, inc)):
				bad.append(f'{rel}: includes "{inc}", not a path from {ROOT}/')
				continue
			ist = stage(inc)
			if st is not None and ist is not None and not may_use(st, ist):
				bad.append(f'{rel} ({st or "entry"}) includes "{inc}" ({ist}): '
					   f'{where(st, ist)} its stage')
			if unit(inc) != u:
				graph[u].add(unit(inc))
				why.setdefault((u, unit(inc)), set()).add(f'#include "{inc}"')
		for name in uses(code[rel]):
			owners = defs.get(name, set()) - {u}
			if len(owners) != 1 or u in defs.get(name, set()):
				continue	# undefined here, ambiguous, or its own
			v = next(iter(owners))
			if rel.endswith(".h") and kinds.get(name) in ("function", "variable"):
				continue	# a header declares it: the .c files using it depend
			graph[u].add(v)
			why.setdefault((u, v), set()).add(name)
			vst = stage(v + ".h") if os.path.exists(os.path.join(ROOT, v + ".h")) else \
			      stage(v + ".c")
			if st is not None and vst is not None and not may_use(st, vst):
				bad.append(f"{rel} ({st or 'entry'}) uses {name} of {v} ({vst}): "
					   f"{where(st, vst)} its stage")
	for comp in find_cycles(graph):
		path = circle_in(comp, graph)
		steps = "; ".join(f"{a} -> {b}: {', '.join(sorted(why[(a, b)])[:4])}"
				  for a, b in zip(path, path[1:]))
		bad.append(f"circle of {len(comp)} files: {' -> '.join(path)} ({steps})")
	for b in sorted(set(bad)):
		print("FAIL:", b)
	if bad:
		print(f"{len(set(bad))} structure problem(s) in {ROOT}/")
		return 1
	edges = sum(len(v) for v in graph.values())
	print(f"OK: {len(graph)} units in {len(set(map(stage, files)))} stages, {edges} "
	      f"dependencies, every one down or within its stage, no circle")
	return 0


if __name__ == "__main__":
	sys.exit(main())
