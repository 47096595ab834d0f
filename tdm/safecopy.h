/*
 * Copies between a file mapping and user memory that survive the file
 * shrinking under them.  A load or store to a page of a MAP_SHARED file
 * mapping past the file's end raises SIGBUS (so does a media error under
 * DAX); the layer's handler returns such a copy as failed, and the caller
 * redoes the call with the kernel, which answers as the plain call would.
 *
 * The handler stays installed for the process's life: an application's
 * own SIGBUS disposition (sigaction, signal) is recorded and honoured for
 * every SIGBUS that is not the layer's.
 */
#ifndef TDM_SAFECOPY_H
#define TDM_SAFECOPY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "persist.h"

/* installs the handler, keeping the disposition it replaces as the app's */
void tdm_safecopy_install(void);

/* mapping -> user buffers: @len bytes from @src across @iov; false on SIGBUS */
bool tdm_copy_out(const struct iovec *iov, int cnt, const char *src,
                  size_t len);

/*
 * user buffers -> mapping: @len bytes from @iov to @dst, each line written
 * back with @flush (then sfence); false on SIGBUS.
 */
bool tdm_copy_in(char *dst, const struct iovec *iov, int cnt, size_t len,
                 enum tdm_flush_kind flush);

/* sigaction() and signal() for SIGBUS: the app's disposition, kept aside */
int tdm_sigbus_action(const struct sigaction *act, struct sigaction *old);
sighandler_t tdm_sigbus_signal(sighandler_t handler);

#endif
