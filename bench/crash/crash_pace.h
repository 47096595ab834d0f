/*
 * Pacing of crash-writer's appends (--rounds-left R): a run may use 1/R of
 * the room left in its log, spread evenly over its --seconds, so that a
 * log lasts the rounds still planned (a full log would end its stream
 * early, and a kill "while writing" would then find nothing written) and
 * every stream keeps writing until the end of the window.  Without R a
 * run appends as fast as it can until full or out of time.
 */
#ifndef CXLSSD_CRASH_PACE_H
#define CXLSSD_CRASH_PACE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct crash_pace {
    double start, seconds;
    uint64_t budget;            /* units this run may use; UINT64_MAX: all */
};

static inline struct crash_pace crash_pace_new(double start, double seconds,
                                               uint64_t room,
                                               unsigned rounds_left)
{
    struct crash_pace p = { start, seconds, UINT64_MAX };
    if (rounds_left) {
        p.budget = room / rounds_left;
    }
    return p;
}

/* May a run that used @used units append the next one?  Sleeps until
 * that unit is due (@now: the time now, in seconds). */
static inline bool crash_pace_next(const struct crash_pace *p, uint64_t used,
                                   double now)
{
    if (used >= p->budget) {
        return false;
    }
    if (p->budget == UINT64_MAX || p->seconds <= 0) {
        return true;
    }
    double wait = p->start + p->seconds * (double)used / (double)p->budget -
                  now;
    if (wait > 0) {
        struct timespec ts = { (time_t)wait,
                               (long)((wait - (time_t)wait) * 1e9) };
        nanosleep(&ts, NULL);
    }
    return true;
}

#endif
