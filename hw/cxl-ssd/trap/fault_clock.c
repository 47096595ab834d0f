/*
 * Host fault clock: when did the kernel take the fault that a miss is
 * serving?  The handler can time a miss only from the moment it read the
 * uffd event (or entered the SIGBUS handler); the fault itself happened
 * earlier, and latency compensation needs that instant per miss.
 *
 * Source: the kernel tracepoints that start a miss on the faulting thread,
 * sampled by perf into a small ring buffer per thread (opened the first
 * time the thread misses):
 *   exceptions:page_fault_user     a user-mode access (TCG, native threads)
 *   exceptions:page_fault_kernel   a kernel access (a syscall's copy)
 *   kvm:kvm_exit                   the guest exit before KVM faults the
 *                                  page in through get_user_pages
 * Each thread's events go to one buffer written backward in overwrite mode
 * (perf's write_backward, read-only mapping): the kernel keeps the newest
 * record at data_head, so reading the latest event costs no system call.
 * Timestamps use CLOCK_MONOTONIC (attr.use_clockid), the engine's clock.
 *
 * The faulting thread is blocked in the fault (or runs the SIGBUS handler)
 * until the miss is served, so the fault that raised this miss is among its
 * newest events: the newest page fault record naming the faulting page
 * (a SIGBUS may fault in stack pages after it), or the newest record if it
 * is a KVM exit.  Otherwise the miss gets no host time (0) and the caller
 * falls back to its own clock: a thread's first miss (its buffer is opened
 * then) and, on a loaded host, sometimes its next one (the kernel had not
 * yet recorded the thread's fault in the new buffer: it was still empty).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trap_int.h"

#define CLOCK_SLOTS 256          /* threads with a buffer, per trap */
#define RING_DATA_PAGES 2        /* a power of two */
#define READ_RETRIES 4
#define SCAN_RECORDS 8           /* newest records searched for the fault */

enum { EV_PF_USER, EV_PF_KERNEL, EV_KVM_EXIT, EV_COUNT };

static const char *const ev_names[EV_COUNT] = {
    "exceptions/page_fault_user",
    "exceptions/page_fault_kernel",
    "kvm/kvm_exit",
};

enum slot_state { SLOT_FREE, SLOT_OPENING, SLOT_READY, SLOT_FAILED };

struct clock_slot {
    _Atomic pid_t tid;
    atomic_int state;
    atomic_flag reading;        /* one reader per buffer at a time */
    int fds[EV_COUNT];
    void *ring;                 /* perf mmap: control page + data */
};

struct trap_fault_clock {
    int ev_id[EV_COUNT];        /* tracepoint ids, -1 = not on this host */
    uint32_t addr_offset;       /* of "address" in the page fault records */
    size_t page_size;
    size_t ring_len;
    struct clock_slot slots[CLOCK_SLOTS];
};

#define TRACEFS_MOUNT "/sys/kernel/tracing"

static const char *tracefs_dirs[] = {
    TRACEFS_MOUNT "/events", "/sys/kernel/debug/tracing/events",
};

static FILE *open_event_file(const char *event, const char *file)
{
    char path[256];
    for (size_t i = 0; i < sizeof(tracefs_dirs) / sizeof(*tracefs_dirs);
         i++) {
        snprintf(path, sizeof(path), "%s/%s/%s", tracefs_dirs[i], event, file);
        FILE *f = fopen(path, "r");
        if (f) {
            return f;
        }
    }
    return NULL;
}

static int event_id(const char *event)
{
    FILE *f = open_event_file(event, "id");
    int id = -1;
    if (f) {
        if (fscanf(f, "%d", &id) != 1) {
            id = -1;
        }
        fclose(f);
    }
    return id;
}

/* Offset of the "address" field in a page fault event's raw record. */
static int address_offset(const char *event, uint32_t *out)
{
    FILE *f = open_event_file(event, "format");
    if (!f) {
        return -1;
    }
    char line[256];
    int found = -1;
    while (fgets(line, sizeof(line), f)) {
        const char *a = strstr(line, " address;");
        const char *o = strstr(line, "offset:");
        unsigned off;
        if (a && o && sscanf(o, "offset:%u;", &off) == 1) {
            *out = off;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

static int perf_open(const struct trap_fault_clock *c, int ev, pid_t tid,
                     int group_fd)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = (uint64_t)c->ev_id[ev];
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.write_backward = 1;
    a.wakeup_events = 0;        /* nobody polls: never wake anyone */
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, group_fd,
                        PERF_FLAG_FD_CLOEXEC);
}

static void slot_close(struct trap_fault_clock *c, struct clock_slot *s)
{
    if (s->ring) {
        munmap(s->ring, c->ring_len);
        s->ring = NULL;
    }
    for (int ev = 0; ev < EV_COUNT; ev++) {
        if (s->fds[ev] >= 0) {
            close(s->fds[ev]);
            s->fds[ev] = -1;
        }
    }
}

/* Open @tid's events into one buffer.  Returns 0 or -errno. */
static int slot_open(struct trap_fault_clock *c, struct clock_slot *s,
                     pid_t tid)
{
    int lead = -1;
    for (int ev = 0; ev < EV_COUNT; ev++) {
        s->fds[ev] = -1;
    }
    for (int ev = 0; ev < EV_COUNT; ev++) {
        if (c->ev_id[ev] < 0) {
            continue;
        }
        int fd = perf_open(c, ev, tid, -1);
        if (fd < 0) {
            int e = errno;
            slot_close(c, s);
            return -e;
        }
        s->fds[ev] = fd;
        if (lead < 0) {
            void *ring = mmap(NULL, c->ring_len, PROT_READ, MAP_SHARED, fd,
                              0);
            if (ring == MAP_FAILED) {
                int e = errno;
                slot_close(c, s);
                return -e;
            }
            s->ring = ring;
            lead = fd;
        } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, lead) < 0) {
            int e = errno;
            slot_close(c, s);
            return -e;
        }
    }
    return lead >= 0 ? 0 : -ENOENT;
}

struct trap_fault_clock *trap_fault_clock_new(size_t page_size, char *err,
                                              size_t errlen)
{
    struct trap_fault_clock *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen,
                 "compensate=on: host fault clock: out of memory");
        return NULL;
    }
    c->page_size = page_size;
    c->ring_len = (size_t)(1 + RING_DATA_PAGES) * (size_t)getpagesize();
    /*
     * A fresh host has tracefs unmounted: mount it where we may (root),
     * otherwise say what to mount.
     */
    int mount_errno = 0;
    if (event_id(ev_names[EV_PF_USER]) < 0 &&
        mount("nodev", TRACEFS_MOUNT, "tracefs", 0, NULL) < 0 &&
        errno != EBUSY) {
        mount_errno = errno;
    }
    for (int ev = 0; ev < EV_COUNT; ev++) {
        c->ev_id[ev] = event_id(ev_names[ev]);
    }
    if (c->ev_id[EV_PF_USER] < 0 ||
        address_offset(ev_names[EV_PF_USER], &c->addr_offset) < 0) {
        if (mount_errno) {
            snprintf(err, errlen, "compensate=on: host fault clock: "
                     "tracefs is not mounted and mounting it failed (%s): "
                     "run 'mount -t tracefs nodev " TRACEFS_MOUNT
                     "' as root", strerror(mount_errno));
        } else {
            snprintf(err, errlen, "compensate=on: host fault clock: "
                     "tracepoint exceptions:page_fault_user not found in "
                     "tracefs (" TRACEFS_MOUNT ")");
        }
        free(c);
        return NULL;
    }
    /* The kernel fault event must name the address at the same offset. */
    uint32_t koff;
    if (c->ev_id[EV_PF_KERNEL] >= 0 &&
        (address_offset(ev_names[EV_PF_KERNEL], &koff) < 0 ||
         koff != c->addr_offset)) {
        c->ev_id[EV_PF_KERNEL] = -1;
    }
    for (int i = 0; i < CLOCK_SLOTS; i++) {
        for (int ev = 0; ev < EV_COUNT; ev++) {
            c->slots[i].fds[ev] = -1;
        }
        atomic_flag_clear(&c->slots[i].reading);
    }
    /* Permission check up front, on the calling thread. */
    struct clock_slot probe;
    int r = slot_open(c, &probe, 0);
    if (r < 0) {
        snprintf(err, errlen, "compensate=on: host fault clock: "
                 "perf_event_open on tracepoint "
                 "exceptions:page_fault_user: %s (needs "
                 "CAP_PERFMON, or kernel.perf_event_paranoid <= 1 for "
                 "one's own threads)", strerror(-r));
        free(c);
        return NULL;
    }
    slot_close(c, &probe);
    return c;
}

void trap_fault_clock_free(struct trap_fault_clock *c)
{
    if (!c) {
        return;
    }
    for (int i = 0; i < CLOCK_SLOTS; i++) {
        if (atomic_load(&c->slots[i].state) == SLOT_READY) {
            slot_close(c, &c->slots[i]);
        }
    }
    free(c);
}

/* The slot of @tid, claimed and opened on its first miss; NULL if the
 * table is full, the open failed, or another handler is opening it. */
static struct clock_slot *slot_of(struct trap_fault_clock *c, pid_t tid)
{
    for (int i = 0; i < CLOCK_SLOTS; i++) {
        struct clock_slot *s = &c->slots[i];
        pid_t cur = atomic_load_explicit(&s->tid, memory_order_acquire);
        if (cur == tid) {
            return atomic_load_explicit(&s->state, memory_order_acquire) ==
                   SLOT_READY ? s : NULL;
        }
        if (cur == 0) {
            pid_t zero = 0;
            if (atomic_compare_exchange_strong(&s->tid, &zero, tid)) {
                atomic_store(&s->state, SLOT_OPENING);
                bool ok = slot_open(c, s, tid) == 0;
                atomic_store_explicit(&s->state, ok ? SLOT_READY : SLOT_FAILED,
                                      memory_order_release);
                /* the fault being served predates the buffer */
                return NULL;
            }
            if (zero == tid) {
                return NULL;        /* just claimed by another handler */
            }
        }
    }
    return NULL;
}

static void ring_copy(const unsigned char *data, uint64_t mask, uint64_t pos,
                      void *dst, size_t len)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < len; i++) {
        d[i] = data[(pos + i) & mask];
    }
}

/*
 * The time of the fault that raised the miss on @page_addr's page: the
 * newest page fault record on that page among the newest SCAN_RECORDS
 * records of @s (the kernel may fault in the faulting thread's stack or
 * signal frame after the fault itself), or the newest record if it is a
 * KVM exit (which names no host address).  0 if none, or if the kernel
 * kept writing while it was read.
 */
static uint64_t find_fault(const struct trap_fault_clock *c,
                           const struct clock_slot *s, uint64_t page_addr,
                           uint64_t page_mask)
{
    const struct perf_event_mmap_page *pg = s->ring;
    const unsigned char *data = (const unsigned char *)s->ring +
                                getpagesize();
    uint64_t size = (uint64_t)RING_DATA_PAGES * (uint64_t)getpagesize();
    for (int tries = 0; tries < READ_RETRIES; tries++) {
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t found = 0, pos = head;
        if (head == 0) {
            return 0;           /* nothing written yet */
        }
        for (int k = 0; k < SCAN_RECORDS && !found; k++) {
            struct perf_event_header h;
            ring_copy(data, size - 1, pos, &h, sizeof(h));
            /* sample: header, u64 time, u32 raw size, raw data */
            unsigned char rec[256];
            if (h.type != PERF_RECORD_SAMPLE || h.size < sizeof(h) + 12 ||
                h.size > sizeof(rec) || pos + h.size - head > size) {
                break;
            }
            ring_copy(data, size - 1, pos, rec, h.size);
            pos += h.size;
            uint64_t time_ns, addr;
            uint32_t raw_size;
            uint16_t type;
            memcpy(&time_ns, rec + sizeof(h), sizeof(time_ns));
            memcpy(&raw_size, rec + sizeof(h) + 8, sizeof(raw_size));
            const unsigned char *raw = rec + sizeof(h) + 12;
            if (raw_size < sizeof(type) ||
                sizeof(h) + 12 + raw_size > h.size) {
                break;
            }
            memcpy(&type, raw, sizeof(type));
            if ((int)type == c->ev_id[EV_KVM_EXIT]) {
                found = k == 0 ? time_ns : 0;
                break;
            }
            if (c->addr_offset + sizeof(addr) <= raw_size) {
                memcpy(&addr, raw + c->addr_offset, sizeof(addr));
                if ((addr & page_mask) == page_addr) {
                    found = time_ns;
                }
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (__atomic_load_n(&pg->data_head, __ATOMIC_RELAXED) == head) {
            return found;
        }
    }
    return 0;
}

uint64_t trap_fault_clock_read(struct trap_fault_clock *c, pid_t tid,
                               uint64_t addr, uint64_t not_after_ns)
{
    if (!c || tid <= 0) {
        return 0;
    }
    struct clock_slot *s = slot_of(c, tid);
    if (!s || atomic_flag_test_and_set_explicit(&s->reading,
                                                memory_order_acquire)) {
        return 0;
    }
    uint64_t mask = ~(uint64_t)(c->page_size - 1);
    uint64_t t = find_fault(c, s, addr & mask, mask);
    atomic_flag_clear_explicit(&s->reading, memory_order_release);
    return t <= not_after_ns ? t : 0;
}
