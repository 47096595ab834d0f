/*
 * Helpers shared by the static guest programs (vm-images/dax-pattern.c,
 * tests/reliability/relprobe.c): sizes on the command line and the data
 * pattern both write and verify (tests/reliability/rellib.py has its twin).
 */
#ifndef CXLSSD_GUEST_UTIL_H
#define CXLSSD_GUEST_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A number with an optional K, M or G suffix; exits with status 2, naming
 * @prog, if @s is not one. */
static inline uint64_t guest_parse_size(const char *prog, const char *s)
{
    char *end;
    uint64_t v;

    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || end == s)
        goto bad;
    switch (*end) {
    case 'G': v <<= 10; /* fall through */
    case 'M': v <<= 10; /* fall through */
    case 'K': v <<= 10; end++; break;
    }
    if (*end == '\0')
        return v;
bad:
    fprintf(stderr, "%s: bad number '%s'\n", prog, s);
    exit(2);
}

/* splitmix64 of seed and offset: every word differs, stale data shows. */
static inline uint64_t guest_pattern(uint64_t seed, uint64_t off)
{
    uint64_t z = seed + off * 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
