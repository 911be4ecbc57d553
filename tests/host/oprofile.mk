# The profiler's portable core under pthreads (tests/host/oprof_test.c).
OPROF_SRCS := $(wildcard $(TOP)/kern/src/oprofile/*.c)
# the crash recorder, its dump and the watchdog are kernel-only (threads, NMIs, the port)
OPROF_SRCS := $(filter-out %/devoprofile.c %/glue.c %/crashrec.c %/crashdump.c %/watchdog.c,\
	$(OPROF_SRCS))
HOST_TESTS += oprof
HOST_TEST_SRCS_oprof := $(TOP)/tests/host/oprof_test.c $(OPROF_SRCS) \
	$(TOP)/kern/src/io/qio.c $(TOP)/kern/src/io/block.c $(TOP)/kern/src/lib/parse.c \
	$(TOP)/kern/src/thread/qlock.c

# the profiler's private header is a dependency too
$(OUT)/oprof $(OUT)/oprof-tsan $(OUT)/oprof-asan: $(TOP)/kern/src/oprofile/internal.h

# Native benchmark of the hot path (tests/bench/hotpath.sh): -O2, no sanitizers.
$(OUT)/oprof-bench: $(TOP)/tests/host/oprof_bench.c $(OPROF_SRCS) \
		$(TOP)/kern/bench/baseline.c $(TOP)/kern/src/io/qio.c \
		$(TOP)/kern/src/io/block.c $(TOP)/kern/src/lib/parse.c \
		$(TOP)/kern/src/thread/qlock.c $(SHIM) \
		$(wildcard $(TOP)/kern/include/*.h $(TOP)/kern/src/oprofile/*.h)
	@mkdir -p $(OUT)
	$(CC) $(HOST_CFLAGS) -DOPROF_BENCH -o $@ $(filter %.c,$^)
host-all: $(OUT)/oprof-bench
