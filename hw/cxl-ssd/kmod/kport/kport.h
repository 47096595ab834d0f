/*
 * The kernel side of the model's portability layer.  The kernel module
 * builds the model library's unchanged .c files with this directory first
 * on the include path: each libc/pthread/C11 header the model includes
 * (stdlib.h, stdio.h, pthread.h, stdatomic.h, time.h, ...) is a small file
 * here that maps the few facilities the model uses onto kernel APIs
 * (kvmalloc, mutex, __atomic builtins, ktime, printk).  Every one of them
 * includes this file first, so the kernel's own headers are all seen
 * before any of the mapping macros (stdatomic.h's atomic_fetch_add would
 * otherwise rewrite the kernel's function of that name).
 */
#ifndef CXLSSD_KPORT_H
#define CXLSSD_KPORT_H

#ifndef __KERNEL__
#error "kport/ is the kernel module's libc: build it with Kbuild only"
#endif

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/ctype.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stdarg.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#ifndef UINT8_MAX
#define UINT8_MAX U8_MAX
#endif
#ifndef UINT16_MAX
#define UINT16_MAX U16_MAX
#endif
#ifndef UINT32_MAX
#define UINT32_MAX U32_MAX
#endif
#ifndef UINT64_MAX
#define UINT64_MAX U64_MAX
#endif
#ifndef INT32_MAX
#define INT32_MAX S32_MAX
#endif
#ifndef INT64_MAX
#define INT64_MAX S64_MAX
#endif

#endif
