/*
 * Waiting until a modeled deadline (CLOCK_MONOTONIC ns), shared by every
 * miss path.  Short waits busy-wait with a pause hint: a sleep's wake-up
 * latency on the machines measured is tens of us, longer than a whole NAND
 * read (6.2 us).  Waits of 200 us or more sleep with clock_nanosleep until
 * 50 us before the deadline, then spin, so millisecond GC stalls do not burn
 * a CPU.  A wait never returns before its deadline.
 */
#ifndef CXLSSD_MODEL_WAIT_H
#define CXLSSD_MODEL_WAIT_H

#include <stdint.h>

/* Returns the time (>= @deadline_ns) at which it returned. */
uint64_t cxlssd_wait_until(uint64_t deadline_ns);

/* The sleeping half of cxlssd_wait_until() alone: sleeps until 50 us
 * before @deadline_ns if that is 200 us or more away, else returns at once.
 * For loops that spin on a condition with a deadline as a hint. */
void cxlssd_sleep_coarse(uint64_t deadline_ns);

#endif
