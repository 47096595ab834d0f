/*
 * The test's calls as the layer's entry points, linked in (ops.h): the
 * sanitizers see the layer's code without LD_PRELOAD.
 */
#include <fcntl.h>
#include <stdlib.h>

#include "ops.h"
#include "tdm.h"

static int do_creat(const char *path, mode_t mode)
{
    return tdm_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

static int do_fcntl(int fd, int cmd, long arg)
{
    return tdm_fcntl(fd, cmd, (void *)arg);
}

static int do_spawn(pid_t *pid, const char *path,
                    const posix_spawn_file_actions_t *fa,
                    const posix_spawnattr_t *attr, char *const argv[],
                    char *const envp[])
{
    tdm_before_spawn(fa != NULL);
    return posix_spawn(pid, path, fa, attr, argv, envp);
}

const struct ops ops = {
    .name = "engine", .openat = tdm_openat, .creat = do_creat,
    .close = tdm_close, .read = tdm_read, .pread = tdm_pread,
    .readv = tdm_readv, .preadv = tdm_preadv, .write = tdm_write,
    .pwrite = tdm_pwrite, .writev = tdm_writev, .pwritev = tdm_pwritev,
    .lseek = tdm_lseek, .fsync = tdm_fsync, .fdatasync = tdm_fdatasync,
    .ftruncate = tdm_ftruncate, .dup = tdm_dup, .dup2 = tdm_dup2,
    .dup3 = tdm_dup3, .fcntl = do_fcntl, .posix_spawn = do_spawn,
};

void ops_init(void)
{
    tdm_init();
    atexit(tdm_write_stats);
}
