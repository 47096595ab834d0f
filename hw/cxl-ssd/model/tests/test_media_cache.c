/*
 * A persistent device's cache (media.h, cxlssd_media_attach_cache): a
 * child process writes pages through the cache file the way the trap
 * does (fill, mark, store, write back and drop on eviction) and is killed
 * with SIGKILL at a random moment; the parent opens the media file again,
 * attaches the same cache and checks that every store the child finished
 * is in the media file, whole, in its own page.  Also: a clean close
 * leaves nothing to recover, a lost cache file is counted, and a map of
 * another media or cache file is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ftl.h"
#include "media.h"
#include "model.h"
#include "model_test.h"
#include "tap.h"

#define PG 4096ull
#define DEV (64ull << 20)
#define PAGES (DEV / PG)
#define HOT 2048u               /* pages the child writes */
#define WORDS (PG / 8)

static char dir[256], media_path[PATH_MAX], cache_path[PATH_MAX];

static struct cxlssd_model *model(void)
{
    struct cxlssd_config c;
    cxlssd_config_defaults(&c, DEV);
    c.cache_size = 4ull << 20;
    return test_model_new(&c, "model");
}

/* The media store and its cache, as a device opens them at start-up. */
struct dev {
    struct cxlssd_model *m;
    struct cxlssd_media *md;
    int cache;
    uint8_t *map;
};

static bool dev_open(struct dev *d, char *err, size_t len)
{
    d->m = model();
    d->md = d->m ? cxlssd_media_open(media_path, d->m, true, err, len) : NULL;
    d->cache = open(cache_path, O_RDWR | O_CREAT, 0600);
    if (!d->md || d->cache < 0 || ftruncate(d->cache, (off_t)DEV) < 0) {
        return false;
    }
    if (cxlssd_media_attach_cache(d->md, d->cache, 0, cache_path, err,
                                  len) < 0) {
        return false;
    }
    d->map = mmap(NULL, DEV, PROT_READ | PROT_WRITE, MAP_SHARED, d->cache, 0);
    return d->map != MAP_FAILED;
}

static void dev_close(struct dev *d, bool clean)
{
    char err[256];
    if (d->map && d->map != MAP_FAILED) {
        munmap(d->map, DEV);
    }
    if (d->md && cxlssd_media_close(d->md, clean, err, sizeof(err)) < 0) {
        tap_diag("close: %s", err);
    }
    if (d->m) {
        cxlssd_model_free(d->m);
    }
    if (d->cache >= 0) {
        close(d->cache);
    }
    memset(d, 0, sizeof(*d));
    d->cache = -1;
}

/* Opening the device is refused with a message that names the map
 * @map_path as one of another @what (media or cache) file. */
static void check_map_refused(const char *map_path, const char *what)
{
    struct dev d = { .cache = -1 };
    char err[512], another[32];
    snprintf(another, sizeof(another), "another %s file", what);
    tap_ok(!dev_open(&d, err, sizeof(err)) && strstr(err, map_path) &&
           strstr(err, another),
           "a map of %s is refused, naming it: %s", another, err);
    dev_close(&d, false);
}

static uint64_t word(uint64_t page, uint64_t version)
{
    return page << 32 | version;
}

/*
 * The child: versions of HOT pages in random order; ack[p] = the last
 * version of p whose store finished.  A page is either in the cache
 * (filled, marked, written) or written back and dropped, as the trap
 * would after an eviction.
 */
static void child(volatile uint64_t *ack, unsigned seed)
{
    struct dev d = { .cache = -1 };
    char err[512];
    uint8_t *in_cache = calloc(HOT, 1);
    if (!dev_open(&d, err, sizeof(err)) || !in_cache) {
        fprintf(stderr, "child: %s\n", err);
        _exit(3);
    }
    srand(seed);
    for (uint64_t op = 0;; op++) {
        uint64_t p = (uint64_t)rand() % HOT;
        uint64_t *w = (uint64_t *)(d.map + p * PG);
        if (!in_cache[p]) {
            cxlssd_media_fill(d.md, p, d.cache, p * PG);
            in_cache[p] = 1;
        }
        if (rand() % 4 == 0) {
            /* eviction: no store can come any more, write back, drop */
            if (cxlssd_media_writeback(d.md, p, d.cache, p * PG) == 0) {
                fallocate(d.cache, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                          (off_t)(p * PG), PG);
                in_cache[p] = 0;
            }
            continue;
        }
        uint64_t v = ack[p] + 1;
        cxlssd_media_note_writable(d.md, p, 1);
        for (uint64_t i = 0; i < WORDS; i++) {
            w[i] = word(p, v);
        }
        ack[p] = v;
    }
}

/* Every page's words in the media file: its own page's, no older than
 * its last finished store, no newer than the one after. */
static void check_file(const volatile uint64_t *ack, const char *what)
{
    struct dev d = { .cache = -1 };
    char err[512];
    uint64_t bad_page = 0, stale = 0, recovered, unmapped = 0;
    struct cxlssd_media_stats st;
    bool ok = dev_open(&d, err, sizeof(err));
    tap_ok(ok, "%s: the next start attaches the cache%s%s", what,
           ok ? "" : ": ", ok ? "" : err);
    if (!ok) {
        dev_close(&d, false);
        return;
    }
    cxlssd_media_get_stats(d.md, &st);
    recovered = st.cache_recovered;
    uint64_t *buf = malloc(PG);
    int scratch = memfd_create("scratch", 0);
    for (uint64_t p = 0; p < HOT; p++) {
        cxlssd_media_fill(d.md, p, scratch, 0);
        if (pread(scratch, buf, PG, 0) != (ssize_t)PG) {
            bad_page++;
            continue;
        }
        if (buf[0] && ftl_lookup(cxlssd_model_ftl(d.m), p) == UINT32_MAX) {
            unmapped++;     /* data in the file, none in the FTL */
        }
        for (uint64_t i = 0; i < WORDS; i++) {
            uint64_t v = buf[i] & 0xffffffffu;
            if (buf[i] && (buf[i] >> 32) != p) {
                bad_page++;
                break;
            }
            if (v < ack[p] || v > ack[p] + 1) {
                stale++;
                break;
            }
        }
        fallocate(scratch, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, PG);
    }
    close(scratch);
    free(buf);
    tap_eq(bad_page, 0, "no page holds another page's data");
    tap_eq(stale, 0, "every finished store is in the media file");
    tap_eq(unmapped, 0, "the rebuilt FTL maps every page that holds data");
    tap_diag("%s: %llu dirty pages written back from the cache at start",
             what, (unsigned long long)recovered);
    dev_close(&d, true);
}

static uint64_t stores_acknowledged(const volatile uint64_t *ack)
{
    uint64_t n = 0;
    for (uint64_t p = 0; p < HOT; p++) {
        n += ack[p];
    }
    return n;
}

/*
 * The delay counts from the child's first finished store, not from the
 * fork: under ThreadSanitizer on a loaded host (a clean-clone CI run at
 * load average 11) the child's start alone took more than 100 ms, and a
 * writer killed before its first store leaves nothing to check.  A child
 * that never stores within 60 s is killed then.
 */
static void kill_child_after(volatile uint64_t *ack, unsigned seed,
                             long delay_us)
{
    uint64_t before = stores_acknowledged(ack);
    pid_t pid = fork();
    if (pid == 0) {
        child(ack, seed);
    }
    for (int ms = 0; ms < 60000 && stores_acknowledged(ack) == before; ms++) {
        usleep(1000);
    }
    usleep((useconds_t)delay_us);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
           "seed %u: the writer was killed after %ld us", seed, delay_us);
}

int main(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof(dir), "%s/test-media-cache-%d", base, getpid());
    snprintf(media_path, sizeof(media_path), "%s/media.img", dir);
    snprintf(cache_path, sizeof(cache_path), "%s/cache", dir);
    if (mkdir(dir, 0700) < 0) {
        tap_skip_all("cannot make a test folder");
    }
    volatile uint64_t *ack = mmap(NULL, HOT * 8, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    srand((unsigned)ts.tv_nsec);

    for (unsigned k = 0; k < 12; k++) {
        unsigned seed = (unsigned)rand();
        kill_child_after(ack, seed, 20000 + rand() % 200000);
        char what[64];
        snprintf(what, sizeof(what), "kill %u", k + 1);
        check_file(ack, what);
    }

    /* a clean close leaves nothing to write back */
    struct dev d = { .cache = -1 };
    char err[512];
    struct cxlssd_media_stats st;
    char map_path[PATH_MAX + 8];
    int fd;
    snprintf(map_path, sizeof(map_path), "%s.dirty", cache_path);
    tap_ok(dev_open(&d, err, sizeof(err)), "open after the checks");
    dev_close(&d, true);
    tap_ok(dev_open(&d, err, sizeof(err)), "open after a clean close");
    cxlssd_media_get_stats(d.md, &st);
    tap_eq(st.cache_recovered, 0, "a clean close: no page to recover");
    dev_close(&d, true);

    /* the cache's pages gone, its map kept: marked pages counted lost */
    kill_child_after(ack, 5, 100000);
    fd = open(cache_path, O_RDWR);
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)DEV);
    close(fd);
    tap_ok(dev_open(&d, err, sizeof(err)), "open with an emptied cache");
    cxlssd_media_get_stats(d.md, &st);
    tap_ok(st.cache_lost > 0 && st.cache_recovered == 0,
           "an emptied cache: %llu marked pages counted lost, none written "
           "back", (unsigned long long)st.cache_lost);
    dev_close(&d, true);

    /* a cache file made anew (a host reboot without its map): refused */
    kill_child_after(ack, 7, 100000);
    unlink(cache_path);
    fd = open(cache_path, O_RDWR | O_CREAT, 0600);
    close(fd);
    check_map_refused(map_path, "cache");
    unlink(map_path);
    tap_ok(dev_open(&d, err, sizeof(err)), "no map: the cache starts empty");
    cxlssd_media_get_stats(d.md, &st);
    tap_eq(st.cache_recovered, 0, "no map: nothing to write back");
    dev_close(&d, true);

    /* the map of another media file */
    kill_child_after(ack, 9, 100000);
    unlink(media_path);
    check_map_refused(map_path, "media");

    unlink(map_path);
    unlink(cache_path);
    unlink(media_path);
    rmdir(dir);
    return tap_done();
}
