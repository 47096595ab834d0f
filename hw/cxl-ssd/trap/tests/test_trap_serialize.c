/*
 * Trap engine, serialize hooks (the BQL in QEMU): "vCPU" threads fault
 * with a fake BQL taken by serialize_begin() (held across the miss, like
 * bql=on), while the "main loop" thread holds that same lock and touches
 * non-resident pages itself (QEMU's monitor `xp`, DMA).  With one handler
 * thread this deadlocks unless the engine keeps a handler free to read
 * events (it starts a spare when the last free handler blocks in the hook).
 * Also checks the records: BQL timestamps for vCPU misses, none for the
 * main thread's, vCPU indices from the vcpu_index hook.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "trap_test.h"

#define NPAGES 256
#define FRAMES 16
#define NVCPU 2
#define RUN_NS 1000000000ull

struct fake_qemu {
    pthread_mutex_t bql;
    atomic_int vcpu_tid[NVCPU];
    atomic_uint_fast64_t locked_calls, unlocked_calls;
};

static int vcpu_of(struct fake_qemu *q, pid_t tid)
{
    for (int i = 0; i < NVCPU; i++) {
        if (atomic_load(&q->vcpu_tid[i]) == tid) {
            return i;
        }
    }
    return -1;
}

static bool ser_begin(void *opaque, pid_t tid)
{
    struct fake_qemu *q = opaque;
    if (vcpu_of(q, tid) < 0) {
        atomic_fetch_add(&q->unlocked_calls, 1);
        return false;   /* never the BQL for non-vCPU threads */
    }
    pthread_mutex_lock(&q->bql);
    atomic_fetch_add(&q->locked_calls, 1);
    return true;
}

static void ser_end(void *opaque)
{
    struct fake_qemu *q = opaque;
    pthread_mutex_unlock(&q->bql);
}

static int vcpu_index(void *opaque, pid_t tid)
{
    return vcpu_of(opaque, tid);
}

struct vcpu {
    struct env *e;
    struct fake_qemu *q;
    int id;
    uint64_t ops, bad;
};

static void *vcpu_fn(void *arg)
{
    struct vcpu *v = arg;
    atomic_store(&v->q->vcpu_tid[v->id], (int)syscall(SYS_gettid));
    uint64_t rs = 0xabcdef12345ull * (uint64_t)(v->id + 3);
    uint64_t end = cxlssd_now_ns() + RUN_NS;
    while (cxlssd_now_ns() < end) {
        uint64_t p = rng_next(&rs) % NPAGES;
        v->bad += check_page(v->e->a, p, 77) != 0;
        v->ops++;
    }
    return NULL;
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 60);
    fill_pattern(e.b, NPAGES, 77);
    static struct fake_qemu q;
    pthread_mutex_init(&q.bql, NULL);
    for (int i = 0; i < NVCPU; i++) {
        atomic_store(&q.vcpu_tid[i], -1);
    }
    char rec[96];
    snprintf(rec, sizeof(rec), "/tmp/cxlssd-trap-serialize-%d.csv",
             (int)getpid());
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    struct cxlssd_model *m = test_model(&mc);
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_POLL, 1);
    tc.record_path = rec;
    tc.compensate = true;
    struct cxlssd_trap_hooks hooks = {
        .opaque = &q, .serialize_begin = ser_begin,
        .serialize_end = ser_end, .vcpu_index = vcpu_index,
    };
    struct cxlssd_trap *t = test_trap_new(m, &e, &tc, &hooks, "setup");
    if (!t) {
        return tap_done();
    }
    static struct vcpu v[NVCPU];
    pthread_t th[NVCPU];
    for (int i = 0; i < NVCPU; i++) {
        v[i] = (struct vcpu){ .e = &e, .q = &q, .id = i };
        pthread_create(&th[i], NULL, vcpu_fn, &v[i]);
    }
    /* "Main loop": holds the BQL while touching pages. */
    uint64_t rs = 99, main_ops = 0, main_bad = 0;
    uint64_t end = cxlssd_now_ns() + RUN_NS;
    while (cxlssd_now_ns() < end) {
        pthread_mutex_lock(&q.bql);
        for (int k = 0; k < 8; k++) {
            uint64_t p = rng_next(&rs) % NPAGES;
            main_bad += check_page(e.a, p, 77) != 0;
            main_ops++;
        }
        pthread_mutex_unlock(&q.bql);
        usleep(200);
    }
    uint64_t ops = 0, bad = 0;
    for (int i = 0; i < NVCPU; i++) {
        pthread_join(th[i], NULL);
        ops += v[i].ops;
        bad += v[i].bad;
    }
    struct cxlssd_trap_stats ts;
    cxlssd_trap_get_stats(t, &ts);
    cxlssd_trap_free(t);
    tap_ok(bad == 0 && main_bad == 0, "no hang, data correct: vCPU ops %llu, "
       "main-thread ops under the BQL %llu",
       (unsigned long long)ops, (unsigned long long)main_ops);
    tap_ok(atomic_load(&q.locked_calls) > 0 && atomic_load(&q.unlocked_calls) > 0,
       "hook took the lock for vCPU faults (%llu) and not for the main "
       "thread's (%llu)", (unsigned long long)atomic_load(&q.locked_calls),
       (unsigned long long)atomic_load(&q.unlocked_calls));
    tap_ok(ts.bql_wait_ns > 0, "bql_wait_ns accumulated (%.3f ms)",
       (double)ts.bql_wait_ns / 1e6);

    /* Records: vcpu column and BQL timestamps. */
    FILE *f = fopen(rec, "r");
    char line[1024];
    int c_vcpu = -1, c_req = -1, c_acq = -1, c_rel = -1, c_comp = -1;
    uint64_t rows = 0, vrows = 0, vrows_bql = 0, mrows = 0, mrows_bql = 0;
    if (f && fgets(line, sizeof(line), f)) {
        int i = 0;
        for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n")) {
            c_vcpu = strcmp(tok, "vcpu") == 0 ? i : c_vcpu;
            c_req = strcmp(tok, "t_bql_req_ns") == 0 ? i : c_req;
            c_acq = strcmp(tok, "t_bql_acq_ns") == 0 ? i : c_acq;
            c_rel = strcmp(tok, "t_bql_rel_ns") == 0 ? i : c_rel;
            c_comp = strcmp(tok, "compensated") == 0 ? i : c_comp;
            i++;
        }
        while (fgets(line, sizeof(line), f)) {
            long long val[64] = { 0 };
            int n = 0;
            char *s = line, *tok;
            while ((tok = strsep(&s, ",\n")) != NULL && n < 64) {
                val[n++] = strtoll(tok, NULL, 10);
            }
            rows++;
            bool bql = val[c_req] > 0 && val[c_acq] >= val[c_req] &&
                       val[c_rel] >= val[c_acq];
            if (val[c_vcpu] >= 0 && val[c_vcpu] < NVCPU) {
                vrows++;
                vrows_bql += bql;
            } else if (val[c_vcpu] == -1) {
                mrows++;
                mrows_bql += val[c_req] != 0;
            }
        }
    }
    if (f) {
        fclose(f);
    }
    unlink(rec);
    tap_ok(c_vcpu >= 0 && vrows > 0 && vrows_bql == vrows,
       "records: %llu vCPU misses, all with BQL request/acquire/release "
       "times (%llu)", (unsigned long long)vrows,
       (unsigned long long)vrows_bql);
    tap_ok(mrows > 0 && mrows_bql == 0, "records: %llu main-thread misses with "
       "vcpu=-1 and no BQL stage (%llu had one)", (unsigned long long)mrows,
       (unsigned long long)mrows_bql);
    (void)c_comp;
    cxlssd_model_free(m);
    env_close(&e);
    return tap_done();
}
