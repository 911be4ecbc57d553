# The jittered periods' recipe (kern/include/jitter.h): stepping equals jumping, offsets
# uniform over the window: build/host/jitter{,-tsan,-asan}
HOST_TESTS += jitter
HOST_TEST_SRCS_jitter := $(TOP)/tests/host/jitter_test.c
