/*
 * NAND timing model (see nand.h).
 *
 * Timing rules (all times absolute ns):
 *
 *   read    start  = max(now, lun_busy)
 *           xfer   = first channel slot of t_xfer at or after start + tR
 *           lun_busy = xfer_end      (the LUN keeps the page in its data
 *                                     register until the transfer has taken
 *                                     it, so it stays occupied until then)
 *           completion = xfer_end
 *   program xfer   = first channel slot of t_xfer at or after
 *                    max(now, lun_busy) (the data goes into the LUN's
 *                    register, so the LUN must be idle)
 *           lun_busy = completion = xfer_end + tPROG
 *   erase   start  = max(now, lun_busy); lun_busy = completion = start + tBERS
 *
 * LUN timelines are plain busy-until values: a LUN executes its operations
 * in issue order.  Channel timelines are lists of reserved intervals so that
 * a transfer can use an idle gap before a reservation made for a future
 * operation: garbage collection schedules hundreds of copies on one LUN at
 * once, and with a busy-until channel every other LUN of that channel would
 * wait for the whole GC run.  Without gaps (no GC backlog) the list holds one
 * interval and the lookup is O(1).  Intervals that ended more than
 * NAND_CHAN_SLACK_NS before the issue time of an operation are forgotten.
 *
 * Not thread-safe: the FTL serialises every call.
 */
#include "nand.h"

#include <stdlib.h>
#include <string.h>

/* Keep finished channel intervals this long after their end, so callers
 * whose "now" lags slightly (threads racing for the FTL lock) still see
 * them. */
#define NAND_CHAN_SLACK_NS 100000ull

struct nand_chan {
    uint64_t *s;        /* interval starts, sorted, non-overlapping */
    uint64_t *e;        /* interval ends */
    uint32_t lo;        /* first live interval */
    uint32_t n;         /* one past the last interval */
    uint32_t cap;
    uint64_t busy_ns;   /* sum of transfer times */
};

struct nand {
    uint32_t channels;
    uint32_t luns_per_channel;
    uint32_t luns;
    uint32_t blocks_per_lun;
    uint32_t pages_per_block;
    uint32_t pages_per_lun;
    uint64_t t_read, t_prog, t_erase, t_xfer;
    uint64_t *lun_busy;
    struct nand_chan *chan;
};

struct nand *nand_new(const struct cxlssd_config *cfg, uint32_t blocks_per_lun)
{
    if (!cfg || cfg->channels == 0 || cfg->luns_per_channel == 0 ||
        blocks_per_lun == 0 || cfg->pages_per_block == 0) {
        return NULL;
    }
    uint64_t luns = (uint64_t)cfg->channels * cfg->luns_per_channel;
    uint64_t ppl = (uint64_t)blocks_per_lun * cfg->pages_per_block;
    /* Every physical page must be addressable, UINT32_MAX is "none". */
    if (luns > UINT32_MAX || ppl > UINT32_MAX ||
        luns * ppl >= (uint64_t)UINT32_MAX) {
        return NULL;
    }
    struct nand *n = calloc(1, sizeof(*n));
    if (!n) {
        return NULL;
    }
    n->channels = cfg->channels;
    n->luns_per_channel = cfg->luns_per_channel;
    n->luns = (uint32_t)luns;
    n->blocks_per_lun = blocks_per_lun;
    n->pages_per_block = cfg->pages_per_block;
    n->pages_per_lun = (uint32_t)ppl;
    n->t_read = cfg->t_read_ns;
    n->t_prog = cfg->t_prog_ns;
    n->t_erase = cfg->t_erase_ns;
    n->t_xfer = cfg->t_xfer_ns;
    n->lun_busy = calloc(n->luns, sizeof(*n->lun_busy));
    n->chan = calloc(n->channels, sizeof(*n->chan));
    if (!n->lun_busy || !n->chan) {
        nand_free(n);
        return NULL;
    }
    for (uint32_t c = 0; c < n->channels; c++) {
        struct nand_chan *ch = &n->chan[c];
        ch->cap = 64;
        ch->s = malloc(ch->cap * sizeof(*ch->s));
        ch->e = malloc(ch->cap * sizeof(*ch->e));
        if (!ch->s || !ch->e) {
            nand_free(n);
            return NULL;
        }
    }
    return n;
}

void nand_free(struct nand *n)
{
    if (!n) {
        return;
    }
    if (n->chan) {
        for (uint32_t c = 0; c < n->channels; c++) {
            free(n->chan[c].s);
            free(n->chan[c].e);
        }
    }
    free(n->chan);
    free(n->lun_busy);
    free(n);
}

uint32_t nand_luns(const struct nand *n) { return n->luns; }
uint32_t nand_blocks_per_lun(const struct nand *n) { return n->blocks_per_lun; }
uint32_t nand_pages_per_block(const struct nand *n) { return n->pages_per_block; }

/* LUN index = channel + channels * way: consecutive LUNs are on different
 * channels. */
uint32_t nand_channel_of_lun(const struct nand *n, uint32_t lun)
{
    return lun % n->channels;
}

cxlssd_ppa nand_ppa(const struct nand *n, uint32_t lun, uint32_t block,
                    uint32_t page)
{
    return lun * n->pages_per_lun + block * n->pages_per_block + page;
}

uint32_t nand_ppa_lun(const struct nand *n, cxlssd_ppa ppa)
{
    return ppa / n->pages_per_lun;
}

uint32_t nand_ppa_block(const struct nand *n, cxlssd_ppa ppa)
{
    return (ppa % n->pages_per_lun) / n->pages_per_block;
}

uint32_t nand_ppa_page(const struct nand *n, cxlssd_ppa ppa)
{
    return ppa % n->pages_per_block;
}

static void chan_prune(struct nand_chan *ch, uint64_t now)
{
    if (now <= NAND_CHAN_SLACK_NS) {
        return;
    }
    uint64_t horizon = now - NAND_CHAN_SLACK_NS;
    while (ch->lo + 1 < ch->n && ch->e[ch->lo] <= horizon) {
        ch->lo++;     /* keep the last interval: it is the busy-until */
    }
}

/* Make room for one more interval: drop pruned entries, or grow. */
static bool chan_make_room(struct nand_chan *ch)
{
    if (ch->n < ch->cap) {
        return true;
    }
    if (ch->lo >= ch->cap / 4) {
        uint32_t live = ch->n - ch->lo;
        memmove(ch->s, ch->s + ch->lo, live * sizeof(*ch->s));
        memmove(ch->e, ch->e + ch->lo, live * sizeof(*ch->e));
        ch->lo = 0;
        ch->n = live;
        return true;
    }
    uint32_t cap = ch->cap * 2;
    uint64_t *s = realloc(ch->s, cap * sizeof(*s));
    if (!s) {
        return false;
    }
    ch->s = s;
    uint64_t *e = realloc(ch->e, cap * sizeof(*e));
    if (!e) {
        return false;
    }
    ch->e = e;
    ch->cap = cap;
    return true;
}

/*
 * Reserve @x ns on channel @ch at the earliest time >= @t when it is idle
 * for that long; returns the start of the reservation.  Every transfer on a
 * channel has the same length, so an idle gap shorter than @x can never be
 * used: it is merged into its neighbours, which keeps the list short.
 */
static uint64_t chan_reserve(struct nand_chan *ch, uint64_t now, uint64_t t,
                             uint64_t x)
{
    ch->busy_ns += x;
    if (x == 0) {
        return t;
    }
    chan_prune(ch, now);
    if (!chan_make_room(ch)) {
        /* Out of memory: behave as a busy-until timeline. */
        uint64_t *end = &ch->e[ch->n - 1];
        uint64_t start = *end > t ? *end : t;
        *end = start + x;
        return start;
    }
    uint32_t lo = ch->lo, n = ch->n;

    /* Fast path: at or after the end of everything reserved. */
    if (lo == n || ch->e[n - 1] <= t) {
        if (lo < n && t - ch->e[n - 1] < x) {
            ch->e[n - 1] = t + x;
        } else {
            ch->s[n] = t;
            ch->e[n] = t + x;
            ch->n = n + 1;
        }
        return t;
    }

    /* First interval ending after t (ends are sorted). */
    uint32_t a = lo, b = n - 1;
    while (a < b) {
        uint32_t m = a + (b - a) / 2;
        if (ch->e[m] > t) {
            b = m;
        } else {
            a = m + 1;
        }
    }
    uint64_t cur = t;
    uint32_t i;
    for (i = a; i < n; i++) {
        if (ch->s[i] >= cur + x) {
            break;              /* gap [cur, s[i]) is long enough */
        }
        if (ch->e[i] > cur) {
            cur = ch->e[i];
        }
    }
    bool join_prev = i > lo && cur - ch->e[i - 1] < x;
    bool join_next = i < n && ch->s[i] - (cur + x) < x;
    if (join_prev && join_next) {
        ch->e[i - 1] = ch->e[i];
        memmove(ch->s + i, ch->s + i + 1, (n - i - 1) * sizeof(*ch->s));
        memmove(ch->e + i, ch->e + i + 1, (n - i - 1) * sizeof(*ch->e));
        ch->n = n - 1;
    } else if (join_prev) {
        ch->e[i - 1] = cur + x;
    } else if (join_next) {
        ch->s[i] = cur;
    } else {
        memmove(ch->s + i + 1, ch->s + i, (n - i) * sizeof(*ch->s));
        memmove(ch->e + i + 1, ch->e + i, (n - i) * sizeof(*ch->e));
        ch->s[i] = cur;
        ch->e[i] = cur + x;
        ch->n = n + 1;
    }
    return cur;
}

uint64_t nand_read(struct nand *n, cxlssd_ppa ppa, uint64_t now_ns)
{
    uint32_t lun = nand_ppa_lun(n, ppa);
    uint64_t start = now_ns > n->lun_busy[lun] ? now_ns : n->lun_busy[lun];
    uint64_t xs = chan_reserve(&n->chan[lun % n->channels], now_ns,
                               start + n->t_read, n->t_xfer);
    uint64_t done = xs + n->t_xfer;
    n->lun_busy[lun] = done;
    return done;
}

uint64_t nand_program(struct nand *n, cxlssd_ppa ppa, uint64_t now_ns)
{
    uint32_t lun = nand_ppa_lun(n, ppa);
    uint64_t start = now_ns > n->lun_busy[lun] ? now_ns : n->lun_busy[lun];
    uint64_t xs = chan_reserve(&n->chan[lun % n->channels], now_ns,
                               start, n->t_xfer);
    uint64_t done = xs + n->t_xfer + n->t_prog;
    n->lun_busy[lun] = done;
    return done;
}

uint64_t nand_erase(struct nand *n, uint32_t lun, uint32_t block,
                    uint64_t now_ns)
{
    (void)block;
    uint64_t start = now_ns > n->lun_busy[lun] ? now_ns : n->lun_busy[lun];
    uint64_t done = start + n->t_erase;
    n->lun_busy[lun] = done;
    return done;
}

uint64_t nand_channel_busy_ns(const struct nand *n, uint32_t ch)
{
    return ch < n->channels ? n->chan[ch].busy_ns : 0;
}

void nand_reset(struct nand *n)
{
    memset(n->lun_busy, 0, n->luns * sizeof(*n->lun_busy));
    for (uint32_t c = 0; c < n->channels; c++) {
        n->chan[c].lo = 0;
        n->chan[c].n = 0;
        n->chan[c].busy_ns = 0;
    }
}
