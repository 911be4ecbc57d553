# Sourced by the tests that open opreport's files in speedscope (the npm package, pinned,
# installed into build/npm, which git ignores, by scripts/speedscope as for a user), as a user
# would: needs $work (a fresh directory) and fail(). Checks the tools, installs speedscope if
# it is not there, copies it into $work/www/speedscope and serves $work/www on
# 127.0.0.1:$port (speedscope fetches #profileURL=/FILE from there). Sets the EXIT trap that stops the server: a test that
# sources this must not set its own.
for t in npm node chromium python3; do
	command -v $t >/dev/null || fail "$t is not installed (scripts/deps installs it)"
done
ss=$(dirname "$(scripts/speedscope)") || fail "scripts/speedscope could not install speedscope"
mkdir -p "$work/www"
cp -r "$ss" "$work/www/speedscope"
ss_pids=()
trap 'kill "${ss_pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
(cd "$work/www" && exec python3 -m http.server 0 --bind 127.0.0.1) >"$work/http.log" 2>&1 &
ss_pids+=($!)
port=
for i in $(seq 1 50); do
	port=$(grep -oE 'port [0-9]+' "$work/http.log" | awk '{ print $2 }')
	[ -n "$port" ] && break
	sleep 0.2
done
[ -n "$port" ] || fail "no local HTTP server: $(cat "$work/http.log")"
