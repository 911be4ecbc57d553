/*
 * Jittered sampling periods, one recipe for both sources (the sampler's per-core timer,
 * the NMI source's HPET comparators). Any context, NMI included: pure arithmetic, no state.
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
 * The draw is a pure function of (seed, stream, k) -- counter-based, no generator state to
 * share between cores or to advance in order -- so the session's seed (in its header)
 * reproduces every period of it, and a core that skipped slots simply draws slot k's. A
 * stream's key (jitter_key) is made once, when sampling starts; a draw is then one mix
 * and one multiply, inlined into the interrupt that takes the sample.
 */
#ifndef JITTER_H
#define JITTER_H

#include "kernel.h"

/* Streams: the sampler's timer draws one per core (the core's id), the NMI source this. */
#define JITTER_STREAM_NMI	0xffffffffu

/* A 64-bit finalizer (the splitmix64 mix): every input bit reaches every output bit. */
static __force_inline uint64_t jitter_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The key of stream stream of seed, for jitter_offset. */
static inline uint64_t jitter_key(uint64_t seed, uint64_t stream)
{
	return seed + jitter_mix(stream + 1);
}

/*
 * Slot k's offset from its grid point in the stream of key, in [-width / 2, width -
 * width / 2) ticks: uniform over width ticks. width < 2^63.
 */
static __force_inline int64_t jitter_offset(uint64_t key, uint64_t k, uint64_t width)
{
	uint64_t u = jitter_mix(key + k * 0x9e3779b97f4a7c15ull);

	return (int64_t)(((unsigned __int128)u * width) >> 64) - (int64_t)(width / 2);
}

/* The window width for spread percent (0..100) of a period of period ticks. */
static inline uint64_t jitter_width(uint64_t period, uint32_t spread)
{
	return period / 100 * spread + period % 100 * spread / 100;
}

#endif
