/*
 * buildid_cache.c: opreport --perf-data puts the kernel ELF into the user's perf build-id
 * cache, as Linux's `perf record` does for the kernel it ran on, so that perf report, perf
 * script, perf annotate and hotspot name the kernel's functions with no manual step.
 * Called by perfdata.c after the file is written (not with --no-buildid-cache).
 *
 * The cache ($PERF_BUILDID_DIR, else ~/.debug) as `perf buildid-cache -a ELF` lays it out
 * (model/kstore.c writes the ELF's entry and its .build-id link: opreport reads the same),
 * and, for hotspot's parser (which resolves kernel addresses from a kallsyms file only):
 *   DIR/[kernel.kallsyms]/<build-id hex>/kallsyms       "address t name" per code symbol
 * Entries already there are left as they are; what is added is said on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/perf/buildid_cache.h"
#include "model/kstore.h"
#include "util/files.h"

#define LONGPATH (2 * PATH_MAX + 256)	/* a cache path: cache dir + absolute path + id */

/*
 * A symbol kallsyms lists: a function, or a label without a type in code (assembly entry
 * points such as long_mode_entry, the roots of the idle threads' stacks, have no type).
 */
static int code_symbol(Elf *e, const GElf_Sym *sym)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (!sym->st_value || !sym->st_name)
		return 0;
	if (GELF_ST_TYPE(sym->st_info) == STT_FUNC)
		return 1;
	return GELF_ST_TYPE(sym->st_info) == STT_NOTYPE && sym->st_shndx != SHN_UNDEF &&
	       sym->st_shndx < SHN_LORESERVE && (scn = elf_getscn(e, sym->st_shndx)) &&
	       gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* The code symbols of elf's .symtab as kallsyms lines into out. Returns the count, -1. */
static long write_kallsyms(const char *elf, FILE *out)
{
	int fd = open(elf, O_RDONLY);
	Elf *e = fd < 0 ? NULL : (elf_version(EV_CURRENT), elf_begin(fd, ELF_C_READ, NULL));
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	long n = -1;

	while (e && (scn = elf_nextscn(e, scn)) && (gelf_getshdr(scn, &sh), sh.sh_type != SHT_SYMTAB))
		;
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
		n += n < 0;
		if (!gelf_getsym(d, (int)i, &sym) || !code_symbol(e, &sym))
			continue;
		const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
		fprintf(out, "%016" PRIx64 " %c %s\n", (uint64_t)sym.st_value,
			GELF_ST_BIND(sym.st_info) == STB_LOCAL ? 't' : 'T', name ? name : "?");
		n++;
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

/* DIR/[kernel.kallsyms]/HEX/kallsyms unless there. Returns 1 added, 0 there, -1 failed. */
static int add_kallsyms(const char *dir, const char *hex, const char *elf)
{
	char path[LONGPATH], tmp[LONGPATH + 16];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", dir, hex);
	if (!access(path, R_OK))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	if (files_mkdirs(path, 0) || !(f = fopen(tmp, "w")))
		return -1;
	n = write_kallsyms(elf, f);
	if (fclose(f) || n <= 0 || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 1;
}

int buildid_cache_add(const char *elf, const uint8_t *id, size_t n)
{
	char dir[PATH_MAX], abs[PATH_MAX], hex[2 * 64 + 1];
	int e, k;

	if (!realpath(elf, abs) || n < 2 || n > 64 || kstore_cache_dir(dir, sizeof(dir))) {
		fprintf(stderr, "opreport: cannot add %s to perf's build-id cache: %s\n", elf,
			n < 2 || n > 64 ? "no usable build-id" : "no HOME" );
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	if ((e = kstore_cache_add(dir, hex, abs)) < 0 || (k = add_kallsyms(dir, hex, abs)) < 0) {
		fprintf(stderr, "opreport: cannot add %s to perf's build-id cache %s: %s\n", elf,
			dir, strerror(errno));
		return -1;
	}
	if (e || k)
		fprintf(stderr, "opreport: added %s (build-id %s) to perf's build-id cache %s "
			"(--no-buildid-cache: do not)\n", elf, hex, dir);
	return 0;
}
