/* tdm_real under LD_PRELOAD: each call is the next definition after ours. */
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "real.h"

struct tdm_real tdm_real;

static void *next(const char *name, const char *alt)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p && alt) {
        p = dlsym(RTLD_NEXT, alt);
    }
    if (!p) {
        static const char msg[] = "tdm: the C library lacks ";
        /* stderr through the raw call: no wrapped name is resolved yet */
        if (write(2, msg, sizeof(msg) - 1) >= 0 &&
            write(2, name, strlen(name)) >= 0) {
            (void)!write(2, "\n", 1);
        }
        _exit(127);
    }
    return p;
}

#define NEXT(field, name, alt) \
    *(void **)&tdm_real.field = next(name, alt)

void tdm_real_init(void)
{
    NEXT(openat, "openat", NULL);
    NEXT(close, "close", NULL);
    NEXT(read, "read", NULL);
    NEXT(pread, "pread64", "pread");
    NEXT(readv, "readv", NULL);
    NEXT(preadv, "preadv64", "preadv");
    NEXT(preadv2, "preadv64v2", "preadv2");
    NEXT(write, "write", NULL);
    NEXT(pwrite, "pwrite64", "pwrite");
    NEXT(writev, "writev", NULL);
    NEXT(pwritev, "pwritev64", "pwritev");
    NEXT(pwritev2, "pwritev64v2", "pwritev2");
    NEXT(lseek, "lseek64", "lseek");
    NEXT(fsync, "fsync", NULL);
    NEXT(fdatasync, "fdatasync", NULL);
    NEXT(ftruncate, "ftruncate64", "ftruncate");
    NEXT(truncate, "truncate64", "truncate");
    NEXT(fallocate, "fallocate64", "fallocate");
    NEXT(posix_fallocate, "posix_fallocate64", "posix_fallocate");
    NEXT(dup, "dup", NULL);
    NEXT(dup2, "dup2", NULL);
    NEXT(dup3, "dup3", NULL);
    NEXT(fcntl, "fcntl64", "fcntl");
    NEXT(close_range, "close_range", NULL);
    NEXT(closefrom, "closefrom", NULL);
    NEXT(fdopen, "fdopen", NULL);
    NEXT(mmap, "mmap64", "mmap");
    NEXT(sendfile, "sendfile64", "sendfile");
    NEXT(copy_file_range, "copy_file_range", NULL);
    NEXT(splice, "splice", NULL);
    NEXT(execve, "execve", NULL);
    NEXT(execv, "execv", NULL);
    NEXT(execvp, "execvp", NULL);
    NEXT(execvpe, "execvpe", NULL);
    NEXT(fexecve, "fexecve", NULL);
    NEXT(posix_spawn, "posix_spawn", NULL);
    NEXT(posix_spawnp, "posix_spawnp", NULL);
    NEXT(system, "system", NULL);
    NEXT(popen, "popen", NULL);
    NEXT(sigaction, "sigaction", NULL);
    NEXT(signal, "signal", NULL);
}
