/*
 * Per-miss records: handlers push into the model's lock-free ring (never
 * blocking the miss path; a full ring counts a drop).  A low-priority
 * drain thread writes the CSV at cfg->record_path every ~100 ms; the
 * header is written once at start, and the free path drains the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trap_int.h"

#define DRAIN_PERIOD_NS 100000000ull

static void drain(struct cxlssd_trap *t)
{
    if (cxlssd_record_drain(t->ring, t->record_file,
                            t->mode_name ? t->mode_name : "uffd",
                            t->accel_name ? t->accel_name : "native") > 0) {
        fflush(t->record_file);
    }
}

static void *rec_main(void *arg)
{
    struct cxlssd_trap *t = arg;
    /* Linux: nice applies per thread. */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    pthread_mutex_lock(&t->rec_lock);
    while (!t->rec_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + DRAIN_PERIOD_NS;
        ts.tv_sec += (time_t)(ns / 1000000000ull);
        ts.tv_nsec = (long)(ns % 1000000000ull);
        pthread_cond_timedwait(&t->rec_cond, &t->rec_lock, &ts);
        if (t->rec_stop) {
            break;
        }
        pthread_mutex_unlock(&t->rec_lock);
        drain(t);
        pthread_mutex_lock(&t->rec_lock);
    }
    pthread_mutex_unlock(&t->rec_lock);
    return NULL;
}

int trap_records_start(struct cxlssd_trap *t, char *err, size_t errlen)
{
    if (!t->record_path || !*t->record_path) {
        return 0;
    }
    const struct cxlssd_config *mc = cxlssd_model_config(t->model);
    uint32_t cap = mc && mc->record_ring ? mc->record_ring : 65536;
    t->ring = cxlssd_record_ring_new(cap);
    if (!t->ring) {
        snprintf(err, errlen, "record-ring=%u: cannot allocate the record "
                 "ring", cap);
        return -1;
    }
    t->record_file = fopen(t->record_path, "w");
    if (!t->record_file) {
        snprintf(err, errlen, "record-path=\"%s\": %s", t->record_path,
                 strerror(errno));
        return -1;
    }
    cxlssd_record_write_header(t->record_file);
    fflush(t->record_file);
    int r = pthread_create(&t->rec_thread, NULL, rec_main, t);
    if (r != 0) {
        snprintf(err, errlen, "cxl-ssd trap: record thread: %s", strerror(r));
        return -1;
    }
    pthread_setname_np(t->rec_thread, "cxlssd-rec");
    t->rec_started = true;
    return 0;
}

void trap_records_stop(struct cxlssd_trap *t)
{
    if (t->rec_started) {
        pthread_mutex_lock(&t->rec_lock);
        t->rec_stop = true;
        pthread_cond_signal(&t->rec_cond);
        pthread_mutex_unlock(&t->rec_lock);
        pthread_join(t->rec_thread, NULL);
        t->rec_started = false;
    }
    if (t->ring && t->record_file) {
        drain(t);
    }
    if (t->record_file) {
        if (fclose(t->record_file) != 0) {
            fprintf(stderr, "cxl-ssd trap: closing %s: %s\n", t->record_path,
                    strerror(errno));
        }
        t->record_file = NULL;
    }
}
