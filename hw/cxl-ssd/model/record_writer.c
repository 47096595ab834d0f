#include "record_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_PERIOD_NS 100000000ull

struct cxlssd_record_writer {
    struct cxlssd_record_ring *ring;
    FILE *file;
    char *path;
    char *mode;
    char *accel;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;                  /* under lock */
    /* The ring has one consumer at a time: the thread or a sync caller. */
    pthread_mutex_t drain_lock;
};

static void drain(struct cxlssd_record_writer *w)
{
    pthread_mutex_lock(&w->drain_lock);
    if (cxlssd_record_drain(w->ring, w->file, w->mode, w->accel) > 0) {
        fflush(w->file);
    }
    pthread_mutex_unlock(&w->drain_lock);
}

static void *writer_main(void *arg)
{
    struct cxlssd_record_writer *w = arg;

    /* Linux applies nice per thread: keep draining off the miss path. */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t ns = (uint64_t)ts.tv_nsec + DRAIN_PERIOD_NS;
        ts.tv_sec += (time_t)(ns / 1000000000ull);
        ts.tv_nsec = (long)(ns % 1000000000ull);
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
        if (w->stop) {
            break;
        }
        pthread_mutex_unlock(&w->lock);
        drain(w);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct cxlssd_record_writer *
cxlssd_record_writer_new(const char *path, uint32_t ring_capacity,
                         const char *mode, const char *accel,
                         char *err, size_t errlen)
{
    struct cxlssd_record_writer *w = calloc(1, sizeof(*w));
    int r;

    if (!w) {
        snprintf(err, errlen, "record: out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    pthread_mutex_init(&w->drain_lock, NULL);
    w->path = strdup(path);
    w->mode = strdup(mode ? mode : "");
    w->accel = strdup(accel ? accel : "");
    w->ring = cxlssd_record_ring_new(ring_capacity);
    if (!w->path || !w->mode || !w->accel || !w->ring) {
        snprintf(err, errlen, "record-ring=%u: cannot allocate the ring",
                 ring_capacity);
        goto fail;
    }
    w->file = fopen(path, "w");
    if (!w->file) {
        snprintf(err, errlen, "record=%s: %s", path, strerror(errno));
        goto fail;
    }
    cxlssd_record_write_header(w->file);
    if (fflush(w->file) != 0 || ferror(w->file)) {
        /* e.g. a /proc file or a full filesystem: fail now, not later */
        snprintf(err, errlen, "record=%s: %s", path, strerror(errno));
        goto fail;
    }
    r = pthread_create(&w->thread, NULL, writer_main, w);
    if (r) {
        snprintf(err, errlen, "record: cannot start the writer: %s",
                 strerror(r));
        goto fail;
    }
    pthread_setname_np(w->thread, "cxlssd-rec");
    w->started = true;
    return w;

fail:
    cxlssd_record_writer_free(w);
    return NULL;
}

struct cxlssd_record_ring *
cxlssd_record_writer_ring(struct cxlssd_record_writer *w)
{
    return w->ring;
}

void cxlssd_record_writer_sync(struct cxlssd_record_writer *w)
{
    if (w && w->file && w->ring) {
        drain(w);
    }
}

void cxlssd_record_writer_free(struct cxlssd_record_writer *w)
{
    if (!w) {
        return;
    }
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
    }
    if (w->file) {
        if (w->ring) {
            drain(w);
        }
        if (fclose(w->file)) {
            fprintf(stderr, "cxl-ssd: closing %s: %s\n", w->path,
                    strerror(errno));
        }
    }
    if (w->ring) {
        cxlssd_record_ring_free(w->ring);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->drain_lock);
    pthread_cond_destroy(&w->cond);
    free(w->path);
    free(w->mode);
    free(w->accel);
    free(w);
}
