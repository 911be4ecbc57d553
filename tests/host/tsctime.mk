# Exact TSC tick / microsecond / millisecond conversions (kern/include/tsctime.h):
# build/host/tsctime{,-tsan,-asan}
HOST_TESTS += tsctime
HOST_TEST_SRCS_tsctime := $(TOP)/tests/host/tsctime_test.c
