# The profiler's single-producer single-consumer ring (kern/src/oprofile/ring.h):
# build/host/ring{,-tsan,-asan}
HOST_TESTS += ring
HOST_TEST_SRCS_ring := $(TOP)/tests/host/ring_test.c $(TOP)/kern/src/oprofile/ring.c \
	$(TOP)/kern/src/io/block.c
$(OUT)/ring $(OUT)/ring-tsan $(OUT)/ring-asan: $(TOP)/kern/src/oprofile/ring.h
