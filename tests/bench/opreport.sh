#!/usr/bin/env bash
# Throughput of user/opreport end to end: generate a stream of N samples (default 20 M) at
# depth 16 over user/build/fakekern's functions, then time one default report over it (after
# one untimed warm-up run, so the file is read from the page cache, not the disk).
# Prints one line: "opreport: N samples in S s = R Msamples/s, peak RSS M MiB".
# Peak RSS is the process's own getrusage maxrss (reported by the hidden --bench-stats).
# Env: N, DEPTH (16), CORES (4), KEEP=1 keeps user/build/bench.opf (N * 160 bytes at depth 16).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s -C user test-tools
N=${N:-20000000}
DEPTH=${DEPTH:-16}
CORES=${CORES:-4}
f=user/build/bench.opf
trap '[ "${KEEP:-}" = 1 ] || rm -f "$f"' EXIT
if [ ! -s "$f" ] || [ "${KEEP:-}" != 1 ]; then
	echo "bench: generating $N samples, depth $DEPTH, $CORES cores ..." >&2
	user/build/opgen -e user/build/fakekern -c "$CORES" -d "$DEPTH" -n "$N" -s 7 -o "$f"
fi
echo "bench: $(stat -c %s "$f") bytes; warm-up run ..." >&2
user/opreport -k user/build/fakekern "$f" >/dev/null
start=$(date +%s.%N)
user/opreport -k user/build/fakekern --bench-stats "$f" >/dev/null 2>user/build/bench.stats
end=$(date +%s.%N)
cat user/build/bench.stats >&2
samples=$(sed -n 's/.*samples \([0-9]*\) .*/\1/p' user/build/bench.stats)
rss=$(sed -n 's/.*maxrss-kib \([0-9]*\).*/\1/p' user/build/bench.stats)
[ "$samples" = "$N" ] || { echo "bench: opreport counted $samples samples, expected $N" >&2; exit 1; }
awk -v n="$N" -v s="$start" -v e="$end" -v rss="$rss" -v d="$DEPTH" 'BEGIN {
	t = e - s
	printf "opreport: %d samples in %.2f s = %.1f Msamples/s, peak RSS %.1f MiB\n", n, t,
		n / t / 1e6, rss / 1024 > "/dev/stderr"
	printf "## user/opreport throughput (one host core)\n\n"
	printf "| samples (depth %d) | seconds | Msamples/s | peak RSS | target |\n", d
	printf "|---|---|---|---|---|\n"
	printf "| %d | %.2f | %.1f | %.1f MiB | >= 5 Msamples/s |\n", n, t, n / t / 1e6, rss / 1024
}'
