# Sourced by the tests/t/host-* scripts: build one host test's three variants (plain, TSan,
# ASan: build/host/NAME{,-tsan,-asan}) and run each under a deadline. A variant fails if it
# exits non-zero, prints a FAIL line, prints no PASS line, or prints a sanitizer report.
#   host_variants NAME [ARGS...]	returns 0 when all three pass
host_variants() {
	local name=$1; shift
	local bins=("$name" "$name-tsan" "$name-asan") rc=0 out v status
	# only this test's binaries, so another fragment's breakage does not fail this test
	make -s -C tests/host "${bins[@]/#/$PWD/build/host/}" || { echo "FAIL $name: build"; return 1; }
	export TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}"
	export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
	export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
	local report='WARNING: ThreadSanitizer|ERROR: (Address|Leak)Sanitizer|runtime error:|unexpected memory mapping'
	out=$(mktemp)
	for v in "${bins[@]}"; do
		echo "== $v"
		if [ "$v" = "$name-tsan" ]; then
			# TSan cannot run with some ASLR layouts: run without randomization
			timeout 150 setarch "$(uname -m)" -R "build/host/$v" "$@" >"$out" 2>&1
		else
			timeout 150 "build/host/$v" "$@" >"$out" 2>&1
		fi
		status=$?
		cat "$out"
		if [ $status -ne 0 ] || grep -q '^FAIL' "$out" || ! grep -q '^PASS' "$out" ||
		   grep -qE "$report" "$out"; then
			echo "FAIL $v (exit $status)"
			rc=1
		else
			echo "PASS $v"
		fi
	done
	rm -f "$out"
	return $rc
}
