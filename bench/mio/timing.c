/* timing.c: choose the sample timer and calibrate the TSC.
 *
 * The TSC frequency is never assumed: it is measured at start-up against
 * CLOCK_MONOTONIC (two ~50 ms windows).  If the TSC is missing, the two
 * calibrations disagree by more than 1 %, or the result is implausible,
 * samples are timed with clock_gettime(CLOCK_MONOTONIC) instead.  The
 * invariant-TSC flag (CPUID 0x80000007 EDX bit 8) is reported; it is often
 * absent in guests (QEMU TCG's qemu64 model) whose TSC still follows the
 * host's, so its absence alone does not reject the TSC. */
#include "mio.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>

#if MIO_HAVE_TSC
#include <cpuid.h>
#endif

#define CAL_MS 50.0
#define CAL_MAX_SPREAD 0.01

double mio_now_s(void)
{
    return (double)cxlssd_now_ns() * 1e-9;
}

static void cpu_features(struct mio_timer *tm)
{
#if MIO_HAVE_TSC
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d))
        tm->has_tsc = !!(d & (1u << 4));
    unsigned max_ext = __get_cpuid_max(0x80000000u, NULL);
    if (max_ext >= 0x80000001u && __get_cpuid(0x80000001u, &a, &b, &c, &d))
        tm->has_rdtscp = !!(d & (1u << 27));
    if (max_ext >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d))
        tm->invariant_tsc = !!(d & (1u << 8));
#else
    (void)tm;
#endif
}

/* TSC ticks per ns over ms of CLOCK_MONOTONIC.  Each clock read is
 * bracketed by two TSC reads and paired with their midpoint. */
static double calibrate_once(double ms)
{
    uint64_t a0 = mio_rdtsc_fenced();
    uint64_t c0 = cxlssd_now_ns();
    uint64_t a1 = mio_rdtsc_fenced();
    uint64_t target = c0 + (uint64_t)(ms * 1e6), c1;
    do
        c1 = cxlssd_now_ns();
    while (c1 < target);
    uint64_t b0 = mio_rdtsc_fenced();
    c1 = cxlssd_now_ns();
    uint64_t b1 = mio_rdtsc_fenced();
    double ticks = ((double)b0 + (double)b1) / 2 - ((double)a0 + (double)a1) / 2;
    double ns = (double)(c1 - c0);
    if (ns <= 0 || ticks <= 0)
        return 0;
    return ticks / ns;
}

static uint64_t read_timer(enum mio_tmode mode)
{
    uint32_t aux;
    switch (mode) {
    case MIO_TM_RDTSCP: return mio_rdtscp_fenced(&aux);
    case MIO_TM_LFENCE: return mio_rdtsc_fenced();
    default: return cxlssd_now_ns();
    }
}

/* Smallest non-zero step between two consecutive timer reads (the TSC of
 * some hypervisors advances in steps of tens of ticks). */
static uint64_t resolution(enum mio_tmode mode)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 1000; i++) {
        uint64_t a = read_timer(mode), b;
        int spins = 0;
        do
            b = read_timer(mode);
        while (b == a && ++spins < 100000);
        if (b > a && b - a < best)
            best = b - a;
    }
    return best == UINT64_MAX ? 0 : best;
}

void mio_timer_init(struct mio_timer *tm, enum mio_timer_pref pref,
                    int quiet)
{
    tm->has_tsc = tm->has_rdtscp = tm->invariant_tsc = 0;
    tm->tsc_ghz = tm->cal_ghz[0] = tm->cal_ghz[1] = 0;
    cpu_features(tm);
    int usable = 0;
    const char *note = "tsc calibrated";
    if (!MIO_HAVE_TSC || !tm->has_tsc) {
        note = "no TSC";
    } else {
        tm->cal_ghz[0] = calibrate_once(CAL_MS);
        tm->cal_ghz[1] = calibrate_once(CAL_MS);
        double m = (tm->cal_ghz[0] + tm->cal_ghz[1]) / 2;
        double spread = m > 0 ? fabs(tm->cal_ghz[0] - tm->cal_ghz[1]) / m : 1;
        if (m < 0.05 || m > 20)
            note = "tsc frequency implausible";
        else if (spread > CAL_MAX_SPREAD)
            note = "tsc calibrations disagree by > 1%";
        else
            usable = 1;
        if (m > 0)
            tm->tsc_ghz = m;
    }
    if (pref == MIO_TIMER_CLOCK) {
        usable = 0;
        note = "clock requested";
    } else if (pref == MIO_TIMER_TSC && !usable) {
        if (!MIO_HAVE_TSC || !tm->has_tsc || tm->tsc_ghz <= 0) {
            if (!quiet)
                fprintf(stderr, "mio: warning: --timer tsc: no usable TSC, "
                        "using clock_gettime\n");
        } else {
            if (!quiet)
                fprintf(stderr, "mio: warning: --timer tsc forced although "
                        "%s\n", note);
            usable = 1;
            note = "tsc forced";
        }
    }
    if (usable) {
        tm->mode = tm->has_rdtscp ? MIO_TM_RDTSCP : MIO_TM_LFENCE;
        tm->ns_per_tick = 1.0 / tm->tsc_ghz;
    } else {
        tm->mode = MIO_TM_CLOCK;
        tm->ns_per_tick = 1.0;
    }
    tm->note = note;
    tm->resolution_ns = (double)resolution(tm->mode) * tm->ns_per_tick;
    if (!quiet)
        fprintf(stderr, "mio: timer=%s (%s; tsc=%d invariant_tsc=%d "
                "rdtscp=%d calibrations %.5f/%.5f GHz; resolution %.2f ns)\n",
                tm->mode == MIO_TM_CLOCK ? "clock" : "tsc", note,
                tm->has_tsc, tm->invariant_tsc, tm->has_rdtscp,
                tm->cal_ghz[0], tm->cal_ghz[1], tm->resolution_ns);
}
