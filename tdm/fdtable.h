/*
 * fd -> description.  Two levels of slots (1024 x 1024: fds from 2^20 on
 * stay untracked, every call on them passes through), chunks made on first
 * use and kept; a slot is read and swapped under one of 64 stripe locks,
 * so a call's reference to its description outlives a concurrent close.
 * Each slot also keeps its fd's FD_CLOEXEC (what exec and spawn inherit).
 */
#ifndef TDM_FDTABLE_H
#define TDM_FDTABLE_H

#include <stdbool.h>

#include "core.h"

/* @fd's description, referenced (tdm_desc_put when done); NULL: untracked */
struct tdm_desc *tdm_fd_get(int fd);

/*
 * Puts @d (a reference the slot takes over; NULL clears) at @fd and drops
 * the description that was there.
 */
void tdm_fd_set(int fd, struct tdm_desc *d, bool cloexec);

void tdm_fd_set_cloexec(int fd, bool cloexec);

/* clears every slot in [first, last] (last may be ~0u) */
void tdm_fd_clear_range(unsigned first, unsigned last);

/* sets FD_CLOEXEC on every tracked fd in [first, last] */
void tdm_fd_cloexec_range(unsigned first, unsigned last);

/*
 * Calls @fn for every tracked fd; the caller holds every stripe
 * (tdm_fd_lock_all), and @fn must not touch the table.
 */
void tdm_fd_each(void (*fn)(int fd, struct tdm_desc *d, bool cloexec,
                            void *ctx), void *ctx);

void tdm_fd_lock_all(void);
void tdm_fd_unlock_all(void);

#endif
