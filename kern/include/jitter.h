/*
 * Jittered sampling periods, one recipe for both sources (the sampler's per-core timer,
 * the NMI source's HPET comparators). Any context, NMI included: pure arithmetic, the
 * caller keeps the one word of state.
 *
 * Why. With a fixed period a sample lands a fixed number of instructions after the last
 * (exactly so under QEMU's -icount), and a loop whose length divides the period is seen at
 * the same place of every round: its profile is one point of it, however many samples.
 *
 * How. Sample k of a stream is not taken at its grid point k * period but at the grid
 * point plus an offset drawn afresh for every k, uniform over a window of width ticks
 * centred on the grid point (width = spread percent of a period; the README calls 100
 * "anywhere in its own period"). So the mean rate is exactly the grid's (no drift: sample
 * k is always within half a window of k * period, and a core's count of periods by the
 * clock stays exact), and at a spread of 100 the windows tile time: the chance that a
 * sample falls in any interval is its length over the period, wherever a loop's rounds
 * lie -- nothing can alias with it. Consecutive samples are then 0 to 2 periods apart.
 *
 * The draws. A stream's draws are the outputs of a 64-bit linear congruential generator
 * (x' = x * JITTER_A + JITTER_C mod 2^64, a multiplier with good spectral figures in every
 * dimension tried), started at the stream's key (jitter_key: seed and stream mixed): slot
 * k's draw is the state k steps on from the key, and its offset the draw's high bits
 * scaled to the window (jitter_place: one 64x64 multiply, whose high half is uniform
 * over [0, width) to within 2^-64 of a tick). A draw is still a pure function of (seed,
 * stream, k) -- jitter_skip computes it for any k in log2(k) steps -- so the session's seed
 * (in its header) reproduces every period of it, and a core that skipped slots draws slot
 * k's directly. But the interrupt that takes sample k already holds slot k's draw, so
 * slot k + 1's is one step (jitter_next: a multiply and an add) and its moment one more
 * multiply: that is all jitter costs a sample on time. A few slots on are one
 * multiply-add too, by a jump kept ready (jitter_jump: how the NMI source's claiming core
 * draws from its last draw). The late and rare cases (a core
 * that skipped slots, a new rate) jump with jitter_skip, off the hot path, in steps as
 * few as the bits of the slots skipped: a core overloaded by its own samples (100 kHz
 * under emulation) is late at every period, and a dear catch-up would keep it there.
 */
#ifndef JITTER_H
#define JITTER_H

#include "kernel.h"

/* Streams: the sampler's timer draws one per core (the core's id), the NMI source this. */
#define JITTER_STREAM_NMI	0xffffffffu

#define JITTER_A	0xd1342543de82ef95ull	/* the generator's multiplier */
#define JITTER_C	0x9e3779b97f4a7c15ull	/* its increment (odd: full period, 2^64) */

/* A 64-bit finalizer (the splitmix64 mix): every input bit reaches every output bit. */
static __force_inline uint64_t jitter_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The key of stream stream of seed: its state before slot 1 (slot 0's draw). */
static inline uint64_t jitter_key(uint64_t seed, uint64_t stream)
{
	return jitter_mix(seed + jitter_mix(stream + 1));
}

/* The draw of the slot after the one whose draw is x. */
static __force_inline uint64_t jitter_next(uint64_t x)
{
	return x * JITTER_A + JITTER_C;
}

/*
 * The draw of the slot d slots after the one whose draw is x: jitter_next d times, in
 * log2(d) steps (the generator's jump ahead: a step of 2^i is again x * a + c, for a and
 * c squared up), so a late core that skipped a few slots pays a few steps. Slot k's draw
 * in the stream of key is jitter_skip(key, k).
 */
static inline uint64_t jitter_skip(uint64_t x, uint64_t d)
{
	uint64_t a = JITTER_A, c = JITTER_C, mul = 1, add = 0;

	for (; d; d >>= 1) {
		if (d & 1) {
			mul *= a;
			add = add * a + c;
		}
		c *= a + 1;
		a *= a;
	}
	return x * mul + add;
}

/* A jump of d slots as one multiply-add, for any draw x: jitter_skip(x, d) == x * mul + add. */
struct jitter_jump {
	uint64_t mul, add;
};

static inline struct jitter_jump jitter_jump(uint64_t d)
{
	uint64_t add = jitter_skip(0, d);

	return (struct jitter_jump){ .mul = jitter_skip(1, d) - add, .add = add };
}

/*
 * The offset of a slot whose draw is x from the start of its window (its grid point less
 * width / 2), in [0, width) ticks: uniform over width ticks. One multiply: a caller that
 * keeps the window's start instead of the grid point pays nothing more.
 */
static __force_inline uint64_t jitter_into(uint64_t x, uint64_t width)
{
	return (uint64_t)(((unsigned __int128)x * width) >> 64);
}

/*
 * The offset from its grid point of a slot whose draw is x, in [-width / 2, width -
 * width / 2) ticks: uniform over width ticks. width < 2^63.
 */
static __force_inline int64_t jitter_place(uint64_t x, uint64_t width)
{
	return (int64_t)jitter_into(x, width) - (int64_t)(width / 2);
}

/* The window width for spread percent (0..100) of a period of period ticks. */
static inline uint64_t jitter_width(uint64_t period, uint32_t spread)
{
	return period / 100 * spread + period % 100 * spread / 100;
}

#endif
