/*
 * The semantics test's program: a seeded sequence of file calls whose
 * every result goes to a trace (trace.h).  Run once with the layer
 * (LD_PRELOAD=libtdm.so, or the engine linked in: ops_engine.c) and once
 * without, the two traces must be the same, byte for byte.
 *
 *   tdm_ops [--seed N] [--calls N] [--seek-holes] [--trace PATH] DIR
 *   tdm_ops --child-read FD N    (the spawn part's child)
 *
 * --seek-holes: the random phase's lseek also asks SEEK_DATA and SEEK_HOLE
 * on files with holes.  Off by default: a store through a mapping
 * allocates the whole page or folio it lands in (a 2 MiB one on DAX with
 * huge faults, a large folio on ext4), where write() allocates the blocks
 * it wrote, so the answers differ by design (and on tmpfs a read through
 * a mapping allocates too).  Files without holes are asked in any case.
 *
 * DIR must be empty.  At the end every file's size and contents go to the
 * trace, read both through the calls under test and by raw syscalls.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ops.h"
#include "tdm_ops.h"
#include "trace.h"

FILE *trace_out;
unsigned long trace_lines;

void tr(const char *fmt, ...)
{
    va_list ap;
    fprintf(trace_out, "%06lu ", trace_lines++);
    va_start(ap, fmt);
    vfprintf(trace_out, fmt, ap);
    va_end(ap);
    fputc('\n', trace_out);
}

void path_in(const struct run *run, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", run->dir, name);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* a file's contents, hashed through @read (the calls or raw syscalls) */
static uint64_t hash_file(int fd, ssize_t (*read_at)(int, void *, size_t, off_t),
                          off_t *size)
{
    static unsigned char buf[1 << 20];
    uint64_t h = HASH_SEED;
    off_t off = 0;
    ssize_t r;
    /* the random phase keeps files to a few hundred MiB; a bound anyway */
    while (off < (1l << 30) && (r = read_at(fd, buf, sizeof(buf), off)) > 0) {
        h = hash_bytes(h, buf, (size_t)r);
        off += r;
    }
    *size = r < 0 ? -1 : off;
    return h;
}

static ssize_t raw_pread(int fd, void *buf, size_t n, off_t off)
{
    return syscall(SYS_pread64, fd, buf, n, off);
}

static void final_contents(const struct run *run)
{
    struct dirent **list;
    int n = scandir(run->dir, &list, NULL, by_name);
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        char path[4096];
        struct stat st;
        path_in(run, name, path, sizeof(path));
        if (name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
            off_t got_raw, got;
            int raw = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
            uint64_t h_raw = hash_file(raw, raw_pread, &got_raw);
            close(raw);
            int fd = ops.openat(AT_FDCWD, path, O_RDONLY, 0);
            uint64_t h = hash_file(fd, ops.pread, &got);
            ops.close(fd);
            /* concurrent writers' records land in any order (the threads
             * phase checked them): sizes only */
            bool ordered = strcmp(name, "t_append") && strcmp(name, "t_shared");
            tr("final %s size %lld raw %lld %016llx calls %lld %016llx", name,
               (long long)st.st_size, (long long)got_raw,
               ordered ? (unsigned long long)h_raw : 0, (long long)got,
               ordered ? (unsigned long long)h : 0);
        }
        free(list[i]);
    }
    if (n >= 0) {
        free(list);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: tdm_ops [--seed N] [--calls N] [--seek-holes] "
                    "[--trace PATH] DIR\n       tdm_ops --child-read FD N\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct run run = { .seed = 1, .calls = 3000 };
    const char *trace_path = NULL;
    ops_init();
    int i;
    for (i = 1; i < argc && !strncmp(argv[i], "--", 2); i++) {
        if (!strcmp(argv[i], "--child-read") && i + 2 < argc) {
            return child_read(atoi(argv[i + 1]), atol(argv[i + 2]));
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            run.seed = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
            run.calls = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--seek-holes")) {
            run.seek_holes = true;
        } else if (!strcmp(argv[i], "--trace") && i + 1 < argc) {
            trace_path = argv[++i];
        } else {
            return usage();
        }
    }
    if (i + 1 != argc) {
        return usage();
    }
    run.dir = argv[i];
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        fprintf(stderr, "tdm_ops: cannot read /proc/self/exe\n");
        return 1;
    }
    self[n] = '\0';
    run.self = self;
    trace_out = trace_path ? fopen(trace_path, "w") : stdout;
    run.dirfd = open(run.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!trace_out || run.dirfd < 0) {
        fprintf(stderr, "tdm_ops: cannot open %s\n",
                trace_out ? run.dir : trace_path);
        return 1;
    }
    phase_random(&run);
    phase_seek(&run);
    phase_threads(&run);
    phase_procs(&run);
    final_contents(&run);
    fclose(trace_out);
    return 0;
}
