# copy_tree DEST: a scratch copy of the working tree for a build of its own: the tracked files
# (those present) and the build outputs, mtimes preserved, so that a make there rebuilds only
# what the copy changes. build/'s logs, benchmark scratch and the mutants' own output are
# left out. Run from the tree's top. Used by tests/mutants/run and tests/t/opreport-rebuild.
copy_tree() {
	local dest=$1
	mkdir -p "$dest"
	{
		git ls-files -z | while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done
		find build \( -path build/mutants -o -path build/test-logs -o -path build/bench \
			-o -path build/peer \) -prune -o \( -type f -o -type l \) -print0
		find user/build -maxdepth 1 \( -type f -o -type l \) -print0 2>/dev/null
		find user/build/obj \( -type f -o -type l \) -print0 2>/dev/null
		[ -e user/opreport ] && printf 'user/opreport\0'
	} | tar --null -T - -cf - | tar -xf - -C "$dest"
}
