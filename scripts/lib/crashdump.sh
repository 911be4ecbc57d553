# Sourced by scripts/RUN and scripts/profile: the kernel's crash recorder settings and where
# its dump lands on the host. Bash; no side effects on source.
#
# crash_opts: the recorder and watchdog settings for scripts/qemu's CRASH_OPTS, from CRASH
#   (on|off), CRASH_HZ (100), CRASH_WINDOW (KB per core, 64), WATCHDOG (panic|warn|off) and
#   WATCHDOG_MS (1000); printed on stdout.
crash_opts() {
	if [ "${CRASH:-on}" = off ] || [ "${CRASH:-on}" = 0 ]; then
		echo "off watchdog=${WATCHDOG:-panic} wdms=${WATCHDOG_MS:-1000}"
	else
		echo "hz=${CRASH_HZ:-100} window=${CRASH_WINDOW:-64} watchdog=${WATCHDOG:-panic}" \
			"wdms=${WATCHDOG_MS:-1000}"
	fi
}

# crash_keep TMP DIR: if the kernel wrote a dump into TMP, move it into DIR as
# crash-YYYYmmdd-HHMMSS.opf (never over an earlier dump: -N is added) and print its path;
# print nothing and return 1 when there is no dump.
crash_keep() {
	local tmp=$1 dir=$2 stamp name n=1
	[ -s "$tmp" ] || return 1
	stamp=$(date +%Y%m%d-%H%M%S)
	name=crash-$stamp.opf
	while [ -e "$dir/$name" ]; do
		name=crash-$stamp-$n.opf
		n=$((n + 1))
	done
	mv -n "$tmp" "$dir/$name" || return 1
	echo "$dir/$name"
}
