# Sourced by the bash tests that share a host directory with the guest and read it after the
# guest is gone (kern.tcl's boot -tmpshare is for expect tests): makes $share, a fresh
# /tmp/TEST.XXXXXX, and removes it when the test exits -- unless the test failed and KEEP=1,
# as kern.tcl does. Sets the EXIT trap: a test that sources this must not set its own.
share=$(mktemp -d "/tmp/${0##*/}.XXXXXX")
share_exit() {
	local rc=$?
	if [ $rc -ne 0 ] && [ "${KEEP:-}" = 1 ]; then
		echo "KEEP=1: the host share is kept in $share"
	else
		chmod -R u+w "$share" 2>/dev/null
		rm -rf "$share"
	fi
	exit $rc
}
trap share_exit EXIT
