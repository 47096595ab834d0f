/*
 * Model portability (kernel): the out-of-line parts of kport/ -- errno,
 * realloc, strtoull and the FILE text buffer.
 */
#include "kport/stdio.h"
#include "kport/stdlib.h"

int cxlssd_kport_errno;

void *cxlssd_kport_realloc(void *p, size_t n)
{
    return kvrealloc(p, n, GFP_KERNEL);
}

/* C's strtoull for what props.c parses: base 0 (0x hex, 0 octal, else
 * decimal) or an explicit base, ERANGE in errno on overflow. */
unsigned long long cxlssd_kport_strtoull(const char *s, char **end, int base)
{
    unsigned long long v = 0;
    bool overflow = false;
    const char *p = s;

    if (base == 0) {
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit(p[2])) {
            base = 16;
            p += 2;
        } else if (p[0] == '0') {
            base = 8;
        } else {
            base = 10;
        }
    }
    for (;; p++) {
        int d;

        if (isdigit(*p)) {
            d = *p - '0';
        } else if (isalpha(*p)) {
            d = tolower(*p) - 'a' + 10;
        } else {
            break;
        }
        if (d >= base) {
            break;
        }
        if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base) {
            overflow = true;
        }
        v = v * (unsigned)base + (unsigned)d;
    }
    if (end) {
        *end = (char *)p;
    }
    if (overflow) {
        cxlssd_kport_errno = ERANGE;
        return ULLONG_MAX;
    }
    return v;
}

/* Room for @n more bytes and the terminating NUL. */
static int kfile_reserve(FILE *f, size_t n)
{
    if (f->len + n + 1 > f->cap) {
        size_t cap = max(f->cap * 2, f->len + n + 1 + 4096);
        char *b = kvrealloc(f->buf, cap, GFP_KERNEL);

        if (!b) {
            f->failed = true;
            return -1;
        }
        f->buf = b;
        f->cap = cap;
    }
    return 0;
}

int cxlssd_kport_vfprintf(FILE *f, const char *fmt, va_list ap)
{
    va_list aq;
    int n;

    if (!f) {
        vprintk(fmt, ap);
        return 0;
    }
    va_copy(aq, ap);
    n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (kfile_reserve(f, n) < 0) {
        return -1;
    }
    vsnprintf(f->buf + f->len, f->cap - f->len, fmt, ap);
    f->len += n;
    return n;
}

int cxlssd_kport_fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = cxlssd_kport_vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

int cxlssd_kport_fputs(const char *s, FILE *f)
{
    return cxlssd_kport_fprintf(f, "%s", s);
}

size_t cxlssd_kport_fwrite(const void *p, size_t size, size_t n, FILE *f)
{
    size_t len = size * n;

    if (!f || !len || kfile_reserve(f, len) < 0) {
        return 0;
    }
    memcpy(f->buf + f->len, p, len);
    f->len += len;
    f->buf[f->len] = '\0';
    return n;
}

void cxlssd_kfile_release(FILE *f)
{
    kvfree(f->buf);
    memset(f, 0, sizeof(*f));
}
