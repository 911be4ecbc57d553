/*
 * Port I/O behind io.h, so that portable drivers never include x86.h. Any context.
 */
#include "x86.h"
#include "io.h"

uint8_t io_in8(uint16_t port) { return inb(port); }
uint16_t io_in16(uint16_t port) { return inw(port); }
uint32_t io_in32(uint16_t port) { return inl(port); }
void io_out8(uint16_t port, uint8_t v) { outb(port, v); }
void io_out16(uint16_t port, uint16_t v) { outw(port, v); }
void io_out32(uint16_t port, uint32_t v) { outl(port, v); }
