/*
 * sched_gaps.h: where a session's scheduler events are not complete, per core (sched_gaps.c).
 * Called by sched_acct.c's sched_analyze, on events sorted by time, before the replay.
 */
#ifndef OPREPORT_SCHED_GAPS_H
#define OPREPORT_SCHED_GAPS_H

#include "ingest/profile.h"

/*
 * Find the gaps in the events of every core of session s (ps: its accounting and blocks;
 * s->smp sorted by core and time) and put them among its events as SEV_GAP pairs (the
 * events are sorted again), with, at each place the events become complete again (the
 * session's start included), the thread that runs there. Fills each core's unknown,
 * ngaps, lost_placed and unplaced, and the session's unknown and event totals.
 * 0, or -1 (memory).
 */
int sched_gaps(const struct session *ps, struct sched_sess *s);

/* The WARNING line's text (no "WARNING: ", no newline) for session si, s, when part of its
 * core time is unknown: how much, and why (events lost by reason, overwritten, not read).
 * 0 and buf empty when nothing is unknown. */
int sched_unknown_text(const struct sched_sess *s, uint32_t si, char *buf, size_t n);

/* Sort events by time, ties in stream order (a gap's start after, its end before them). */
void sched_sort_events(struct sched_sess *s);

#endif
