/* Per-file counters and their CSV (stats.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "real.h"
#include "stats.h"

const char tdm_stats_header[] =
    "pid,path,dev,inode,map,passthrough_reasons,flush,open_calls,"
    "read_calls_served,read_calls_passed,read_bytes_served,"
    "read_bytes_passed,write_calls_served,write_calls_passed,"
    "write_bytes_served,write_bytes_passed,fsync_calls_served,"
    "fsync_calls_passed,map_calls,eof_fstat_calls,sigbus_recoveries,"
    "hot_regions";

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
/* held across an append: a fork while a thread held the file's flock
 * would leave the child a copy of that description, and with it the lock,
 * for good (every later append, in any process, would wait on it) */
static pthread_mutex_t append_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tdm_stats_file *files;

struct tdm_stats_file *tdm_stats_file(dev_t dev, ino_t ino, const char *path)
{
    struct tdm_stats_file *f;
    pthread_mutex_lock(&files_lock);
    for (f = files; f; f = f->next) {
        if (f->dev == dev && f->ino == ino && !strcmp(f->path, path)) {
            break;
        }
    }
    if (!f && (f = calloc(1, sizeof(*f)))) {
        f->dev = dev;
        f->ino = ino;
        if (!(f->path = strdup(path))) {
            free(f);
            f = NULL;
        } else {
            f->next = files;
            files = f;
        }
    }
    pthread_mutex_unlock(&files_lock);
    return f;
}

unsigned tdm_stats_size_bucket(ssize_t ret)
{
    if (ret <= (1 << TDM_SIZE_MIN_SHIFT)) {
        return 0;
    }
    /* the power of two at or above ret */
    unsigned log2 = 64 - (unsigned)__builtin_clzll((unsigned long long)ret - 1);
    unsigned b = log2 - TDM_SIZE_MIN_SHIFT;
    return b < TDM_SIZE_BUCKETS ? b : TDM_SIZE_BUCKETS - 1;
}

void tdm_stats_io(struct tdm_stats_file *f, int write, int served,
                  ssize_t ret)
{
    static const enum tdm_counter calls[2][2] = {
        { TDM_C_READ_CALLS_PASSED, TDM_C_READ_CALLS_SERVED },
        { TDM_C_WRITE_CALLS_PASSED, TDM_C_WRITE_CALLS_SERVED },
    };
    static const enum tdm_counter bytes[2][2] = {
        { TDM_C_READ_BYTES_PASSED, TDM_C_READ_BYTES_SERVED },
        { TDM_C_WRITE_BYTES_PASSED, TDM_C_WRITE_BYTES_SERVED },
    };
    tdm_stats_interval_tick();
    tdm_stats_add(f, calls[!!write][!!served], 1);
    atomic_fetch_add_explicit(&f->sizes[!!write][tdm_stats_size_bucket(ret)],
                              1, memory_order_relaxed);
    if (ret > 0) {
        tdm_stats_add(f, bytes[!!write][!!served], (uint64_t)ret);
    }
}

void tdm_stats_reset(void)
{
    for (struct tdm_stats_file *f = files; f; f = f->next) {
        for (int c = 0; c < TDM_C_COUNT; c++) {
            atomic_store_explicit(&f->c[c], 0, memory_order_relaxed);
        }
        for (int w = 0; w < 2; w++) {
            for (int b = 0; b < TDM_SIZE_BUCKETS; b++) {
                atomic_store_explicit(&f->sizes[w][b], 0,
                                      memory_order_relaxed);
            }
        }
        memset(f->c_reported, 0, sizeof(f->c_reported));
        memset(f->sizes_reported, 0, sizeof(f->sizes_reported));
    }
}

struct tdm_stats_file *tdm_stats_lock(void)
{
    pthread_mutex_lock(&files_lock);
    return files;
}

void tdm_stats_unlock(void)
{
    pthread_mutex_unlock(&files_lock);
}

void tdm_stats_lock_all(void)
{
    pthread_mutex_lock(&files_lock);
    pthread_mutex_lock(&append_lock);
}

void tdm_stats_unlock_all(void)
{
    pthread_mutex_unlock(&append_lock);
    pthread_mutex_unlock(&files_lock);
}

static const char *map_name(int map)
{
    switch (map) {
    case TDM_MAP_SYNC:
        return "sync";
    case TDM_MAP_SHARED:
        return "shared";
    case TDM_MAP_NONE:
        return "none";
    }
    return "unknown";
}

static void put_reasons(FILE *out, unsigned r)
{
    static const char *const names[] = {
        "not_dax", "mmap_failed", "o_direct", "write_only", "policy",
        "extend", "shared_offset", "sync_write", "args",
    };
    const char *sep = "";
    for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (r & (1u << i)) {
            fprintf(out, "%s%s", sep, names[i]);
            sep = "|";
        }
    }
    if (!*sep) {
        fputc('-', out);
    }
}

char *tdm_stats_field(char *dst, const char *s)
{
    bool quote = strpbrk(s, ",\"\r\n") != NULL;
    if (quote) {
        *dst++ = '"';
    }
    for (; *s; s++) {
        if (*s == '"') {
            *dst++ = '"';
        }
        *dst++ = *s;
    }
    if (quote) {
        *dst++ = '"';
    }
    *dst = '\0';
    return dst;
}

/* the rows with a count (a forked child's inherited files have none) */
static void put_rows(FILE *out, const char *flush)
{
    char path[2 * PATH_MAX + 3];
    for (struct tdm_stats_file *f = files; f; f = f->next) {
        uint64_t any = 0;
        for (int c = 0; c < TDM_C_COUNT; c++) {
            any |= atomic_load(&f->c[c]);
        }
        if (!any) {
            continue;
        }
        tdm_stats_field(path, f->path);
        fprintf(out, "%ld,%s", (long)getpid(), path);
        fprintf(out, ",%ju,%ju,%s,", (uintmax_t)f->dev, (uintmax_t)f->ino,
                map_name(atomic_load(&f->map)));
        put_reasons(out, atomic_load(&f->reasons));
        fprintf(out, ",%s", flush);
        for (int c = 0; c < TDM_C_COUNT; c++) {
            fprintf(out, ",%" PRIu64, atomic_load(&f->c[c]));
        }
        fputc('\n', out);
    }
}

/* @template with "%p" replaced by the pid */
static int expand_path(const char *template, char *path, size_t size)
{
    size_t n = 0;
    for (const char *s = template; *s; s++) {
        int w;
        if (s[0] == '%' && s[1] == 'p') {
            w = snprintf(path + n, size - n, "%ld", (long)getpid());
            s++;
        } else {
            w = snprintf(path + n, size - n, "%c", *s);
        }
        if (w < 0 || (size_t)w >= size - n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        n += (size_t)w;
    }
    return 0;
}

int tdm_stats_append(const char *path_template, const char *header,
                     const char *rows, size_t len)
{
    char path[4096];
    if (expand_path(path_template, path, sizeof(path))) {
        return -1;
    }
    pthread_mutex_lock(&append_lock);
    int fd = tdm_real.openat(AT_FDCWD, path,
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int rc = -1;
    struct stat st;
    if (fd >= 0 && !flock(fd, LOCK_EX) && !fstat(fd, &st)) {
        rc = 0;
        if (st.st_size == 0 &&
            (tdm_real.write(fd, header, strlen(header)) < 0 ||
             tdm_real.write(fd, "\n", 1) < 0)) {
            rc = -1;
        }
        for (size_t off = 0; !rc && off < len;) {
            ssize_t w = tdm_real.write(fd, rows + off, len - off);
            if (w <= 0) {
                rc = -1;
            } else {
                off += (size_t)w;
            }
        }
    }
    if (fd >= 0) {
        tdm_real.close(fd);
    }
    pthread_mutex_unlock(&append_lock);
    return rc;
}

int tdm_stats_write(const char *path_template, const char *flush)
{
    pthread_mutex_lock(&files_lock);
    char *rows = NULL;
    size_t len = 0;
    FILE *mem = files ? open_memstream(&rows, &len) : NULL;
    if (mem) {
        put_rows(mem, flush);
        fclose(mem);
    }
    pthread_mutex_unlock(&files_lock);
    if (!files || (rows && !len)) {
        free(rows);
        return 0;
    }
    if (!rows) {
        return -1;
    }
    int rc = tdm_stats_append(path_template, tdm_stats_header, rows, len);
    free(rows);
    return rc;
}
