/*
 * Reads and writes at an offset on a tracked description: through the
 * mapping where the layer may serve them, else by the kernel's positional
 * call (the offset is either the app's, pread/pwrite, or the layer's copy
 * of the description's, read/write).  Counted in the file's statistics.
 */
#ifndef TDM_RW_H
#define TDM_RW_H

#include <stdbool.h>
#include <sys/uio.h>

#include "core.h"

/* the app's buffers, and whether it passed them as a vector (readv): the
 * kernel judges a scalar call's bad count differently from a vector's */
struct tdm_io {
    const struct iovec *iov;
    int cnt;
    bool vec;
};

/* preadv/pread semantics at @off */
ssize_t tdm_rw_read(struct tdm_desc *d, int fd, const struct tdm_io *io,
                    int64_t off);

/* pwritev/pwrite semantics at @off; not for an O_APPEND description */
ssize_t tdm_rw_write(struct tdm_desc *d, int fd, const struct tdm_io *io,
                     int64_t off);

/* the kernel's call: at @off, or at the kernel's offset (read, readv)
 * where @off is TDM_KERNEL_OFFSET */
#define TDM_KERNEL_OFFSET ((const int64_t *)0)
ssize_t tdm_kernel_read(struct tdm_desc *d, int fd, const struct tdm_io *io,
                        const int64_t *off);
ssize_t tdm_kernel_write(struct tdm_desc *d, int fd, const struct tdm_io *io,
                         const int64_t *off);

/* the same without the statistics, for a fd the layer does not track:
 * the read (@write false) or write call @io names */
ssize_t tdm_real_io(int fd, const struct tdm_io *io, const int64_t *off,
                    bool write);

#endif
