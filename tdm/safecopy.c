/* SIGBUS-safe copies and the app's SIGBUS disposition (safecopy.h). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <string.h>

#include "real.h"
#include "safecopy.h"

/* set while this thread copies to or from a mapping */
static _Thread_local sigjmp_buf *volatile copy_jmp
    __attribute__((tls_model("initial-exec")));

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction app_action;  /* SIG_DFL until the app sets one */

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
    sigjmp_buf *jb = copy_jmp;
    if (jb) {
        copy_jmp = NULL;
        siglongjmp(*jb, 1);
    }
    struct sigaction app = app_action;
    if (app.sa_handler == SIG_DFL || app.sa_handler == SIG_IGN) {
        /* the kernel's answer to an unhandled fault: back to the default,
         * and the faulting instruction, run again, ends the process */
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        tdm_real.sigaction(SIGBUS, &dfl, NULL);
        return;
    }
    if (app.sa_flags & SA_SIGINFO) {
        app.sa_sigaction(sig, info, ctx);
    } else {
        app.sa_handler(sig);
    }
}

void tdm_safecopy_install(void)
{
    struct sigaction sa = {
        .sa_sigaction = on_sigbus,
        /* not blocked while it runs: the copy leaves it by siglongjmp,
         * and the mask must be as it was for the next fault */
        .sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART,
    };
    sigemptyset(&sa.sa_mask);
    pthread_mutex_lock(&app_lock);
    tdm_real.sigaction(SIGBUS, &sa, &app_action);
    pthread_mutex_unlock(&app_lock);
}

/* the copies proper, out of line: what sigsetjmp saved is not touched */
__attribute__((noinline))
static void copy_out(const struct iovec *iov, int cnt, const char *src,
                     size_t len)
{
    for (int i = 0; len && i < cnt; i++) {
        size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
        memcpy(iov[i].iov_base, src, n);
        src += n;
        len -= n;
    }
}

__attribute__((noinline))
static void copy_in(char *dst, const struct iovec *iov, int cnt, size_t len,
                    enum tdm_flush_kind flush)
{
    char *start = dst;
    size_t total = len;
    for (int i = 0; len && i < cnt; i++) {
        size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
        memcpy(dst, iov[i].iov_base, n);
        dst += n;
        len -= n;
    }
    tdm_flush_range(flush, start, total);
}

bool tdm_copy_out(const struct iovec *iov, int cnt, const char *src,
                  size_t len)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 0)) {
        return false;
    }
    copy_jmp = &jb;
    atomic_signal_fence(memory_order_seq_cst);
    copy_out(iov, cnt, src, len);
    atomic_signal_fence(memory_order_seq_cst);
    copy_jmp = NULL;
    return true;
}

bool tdm_copy_in(char *dst, const struct iovec *iov, int cnt, size_t len,
                 enum tdm_flush_kind flush)
{
    sigjmp_buf jb;
    if (sigsetjmp(jb, 0)) {
        return false;
    }
    copy_jmp = &jb;
    atomic_signal_fence(memory_order_seq_cst);
    copy_in(dst, iov, cnt, len, flush);
    atomic_signal_fence(memory_order_seq_cst);
    copy_jmp = NULL;
    return true;
}

int tdm_sigbus_action(const struct sigaction *act, struct sigaction *old)
{
    pthread_mutex_lock(&app_lock);
    if (old) {
        *old = app_action;
    }
    if (act) {
        app_action = *act;
    }
    pthread_mutex_unlock(&app_lock);
    return 0;
}

sighandler_t tdm_sigbus_signal(sighandler_t handler)
{
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    /* signal()'s BSD semantics, as glibc gives them */
    struct sigaction act = { .sa_handler = handler, .sa_flags = SA_RESTART },
                     old;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGBUS);
    tdm_sigbus_action(&act, &old);
    return old.sa_handler;
}
