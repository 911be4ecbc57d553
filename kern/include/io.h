/*
 * Port I/O for portable drivers (virtio's legacy register block lives in an I/O BAR).
 * Implemented in kern/arch/x86/io.c; any context, no locking: a driver serializes its own
 * register accesses where a sequence of them must not interleave.
 */
#ifndef IO_H
#define IO_H

#include "kernel.h"

uint8_t io_in8(uint16_t port);
uint16_t io_in16(uint16_t port);
uint32_t io_in32(uint16_t port);
void io_out8(uint16_t port, uint8_t v);
void io_out16(uint16_t port, uint16_t v);
void io_out32(uint16_t port, uint32_t v);

#endif
