/*
 * The LD_PRELOAD library's exec and spawn exports: each hands the layer's
 * offsets to the kernel first (tdm_before_exec, tdm_before_spawn), since
 * the new image or child reads and writes the shared descriptions through
 * the kernel.  The execl family gathers its arguments as glibc does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "real.h"
#include "tdm.h"

#define EXPORT __attribute__((visibility("default")))

static void before_exec(void)
{
    if (tdm_enter()) {
        tdm_before_exec();
        tdm_leave();
    }
}

static void before_spawn(bool all)
{
    if (tdm_enter()) {
        tdm_before_spawn(all);
        tdm_leave();
    }
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    before_exec();
    return tdm_real.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
    before_exec();
    return tdm_real.execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    before_exec();
    return tdm_real.execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    before_exec();
    return tdm_real.execvpe(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    before_exec();
    return tdm_real.fexecve(fd, argv, envp);
}

/*
 * The arguments after @arg0 up to the NULL, as an argv (and, with
 * @envp, the pointer after the NULL); NULL (errno E2BIG) past 64 Ki.
 */
static char **gather(const char *arg0, va_list ap, char ***envp)
{
    enum { MAX_ARGS = 65536 };
    char **argv = malloc(sizeof(char *) * 2);
    size_t n = 0, cap = 2;
    if (!argv) {
        return NULL;
    }
    for (const char *a = arg0; a; a = va_arg(ap, const char *)) {
        if (n + 2 > cap) {
            char **more = cap < MAX_ARGS ? realloc(argv, sizeof(char *) * cap * 2)
                                         : NULL;
            if (!more) {
                free(argv);
                errno = cap < MAX_ARGS ? ENOMEM : E2BIG;
                return NULL;
            }
            argv = more;
            cap *= 2;
        }
        argv[n++] = (char *)a;
    }
    argv[n] = NULL;
    if (envp) {
        *envp = va_arg(ap, char **);
    }
    return argv;
}

/* execv, execvp or execve (@envp) of a gathered argv, which it frees */
static int exec_gathered(const char *path, char **argv, bool search,
                         char **envp)
{
    if (!argv) {
        return -1;
    }
    int r = envp ? execve(path, argv, envp)
            : search ? execvp(path, argv) : execv(path, argv);
    int e = errno;
    free(argv);
    errno = e;
    return r;
}

EXPORT int execl(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    char **argv = gather(arg0, ap, NULL);
    va_end(ap);
    return exec_gathered(path, argv, false, NULL);
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    char **argv = gather(arg0, ap, NULL);
    va_end(ap);
    return exec_gathered(file, argv, true, NULL);
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
    va_list ap;
    char **envp = NULL;
    va_start(ap, arg0);
    char **argv = gather(arg0, ap, &envp);
    va_end(ap);
    return exec_gathered(path, argv, false, envp ? envp : (char *[]) { NULL });
}

EXPORT int posix_spawn(pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[],
                       char *const envp[])
{
    before_spawn(fa != NULL);
    return tdm_real.posix_spawn(pid, path, fa, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[],
                        char *const envp[])
{
    before_spawn(fa != NULL);
    return tdm_real.posix_spawnp(pid, file, fa, attr, argv, envp);
}

EXPORT int system(const char *cmd)
{
    if (cmd) {
        before_spawn(false);
    }
    return tdm_real.system(cmd);
}

EXPORT FILE *popen(const char *cmd, const char *type)
{
    before_spawn(false);
    return tdm_real.popen(cmd, type);
}
