/*
 * tdm_real where the engine is linked into a program (the sanitizer tests):
 * the C library's own calls, or the sanitizer's interceptors of them.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "real.h"

struct tdm_real tdm_real;

void tdm_real_init(void)
{
    tdm_real = (struct tdm_real) {
        .openat = openat, .close = close, .read = read, .pread = pread,
        .readv = readv, .preadv = preadv, .preadv2 = preadv2,
        .write = write, .pwrite = pwrite, .writev = writev,
        .pwritev = pwritev, .pwritev2 = pwritev2, .lseek = lseek,
        .fsync = fsync, .fdatasync = fdatasync, .ftruncate = ftruncate,
        .truncate = truncate, .fallocate = fallocate,
        .posix_fallocate = posix_fallocate, .dup = dup, .dup2 = dup2,
        .dup3 = dup3, .fcntl = fcntl, .close_range = close_range,
        .closefrom = closefrom, .fdopen = fdopen, .mmap = mmap,
        .sendfile = sendfile, .copy_file_range = copy_file_range,
        .splice = splice, .execve = execve, .execv = execv,
        .execvp = execvp, .execvpe = execvpe, .fexecve = fexecve,
        .posix_spawn = posix_spawn, .posix_spawnp = posix_spawnp,
        .system = system, .popen = popen, .sigaction = sigaction,
        .signal = signal,
    };
}
