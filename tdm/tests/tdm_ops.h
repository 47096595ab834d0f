/* The semantics test's phases (tdm_ops.c runs them in order). */
#ifndef TDM_TEST_TDM_OPS_H
#define TDM_TEST_TDM_OPS_H

#include <stdbool.h>
#include <stdint.h>

struct run {
    const char *dir;        /* the test's directory (made empty) */
    int dirfd;              /* an O_DIRECTORY fd of it */
    bool seek_holes;        /* SEEK_DATA/SEEK_HOLE on files with holes */
    uint64_t seed;
    unsigned calls;         /* the random phase's length */
    const char *self;       /* this program, for the spawned child */
};

/* DIR/NAME in a buffer of the caller's */
void path_in(const struct run *run, const char *name, char *buf, size_t size);

/* a seeded random sequence of calls on a few files (ops_random.c) */
void phase_random(const struct run *run);

/* SEEK_DATA and SEEK_HOLE on a file without holes (ops_random.c) */
void phase_seek(const struct run *run);

/* threads on separate and shared descriptions (ops_threads.c) */
void phase_threads(const struct run *run);

/* fork and spawn with shared descriptions; the file shrunk and grown by
 * calls the layer does not see (ops_procs.c) */
void phase_procs(const struct run *run);

/* the spawned child: reads @n bytes at @fd's offset, prints what it got */
int child_read(int fd, long n);

#endif
