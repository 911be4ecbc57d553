# Blocks and queues (kern/src/block.c, kern/src/qio.c): build/host/qio{,-tsan,-asan}
HOST_TESTS += qio
HOST_TEST_SRCS_qio := $(TOP)/tests/host/qio_test.c $(TOP)/kern/src/qio.c $(TOP)/kern/src/block.c
