/*
 * audit.h: the stream's conservation check (audit.c): does what the stream holds add up to
 * what the kernel says it wrote? Read by --stats (text/stats.c prints the findings) and by
 * opreport.c and the text header, which ask for the verdict only.
 */
#ifndef OPREPORT_AUDIT_H
#define OPREPORT_AUDIT_H

#include <stdint.h>
#include <stdio.h>

#include "ingest/profile.h"

/* AUDIT_NOMEM: a check could not run for want of memory, so there is no verdict (never taken
 * for a failed check: out of memory is said as such). */
enum { AUDIT_FAIL = 1, AUDIT_INCOMPLETE = 2, AUDIT_NOMEM = 4 };

/* The check of session si, findings printed to out (NULL: none); core_fail (NULL, or ncores
 * bytes) gets 1 for each core a check about it failed. Returns AUDIT_* bits. */
int audit_session(const struct profile *p, uint32_t si, FILE *out, uint8_t *core_fail);
int audit_profile(const struct profile *p);	/* AUDIT_* over every session */

/* 1 when some complete core violates the conservation rule (for warnings outside --stats),
 * 0 when none does, -1 when out of memory before the verdict. */
int conservation_failed(const struct profile *p);
/* " no OPF_SESSION_END; no OPF_CORE_END for core 0,1;" for each session that lacks them. */
void incomplete_status(const struct profile *p, FILE *out);

#endif
