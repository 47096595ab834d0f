/*
 * Model portability (kernel): snprintf/vsnprintf are the kernel's; a FILE
 * is a growing text buffer (struct cxlssd_kfile), so the model's CSV
 * writer (record.c) fills the module's records file unchanged; stderr is
 * the kernel log.
 */
#ifndef CXLSSD_KPORT_STDIO_H
#define CXLSSD_KPORT_STDIO_H
#include "kport.h"

struct cxlssd_kfile {
    char *buf;
    size_t len, cap;
    bool failed;            /* an append ran out of memory */
};
typedef struct cxlssd_kfile FILE;
#define stderr ((FILE *)NULL)

__printf(2, 0) int cxlssd_kport_vfprintf(FILE *f, const char *fmt, va_list ap);
__printf(2, 3) int cxlssd_kport_fprintf(FILE *f, const char *fmt, ...);
int cxlssd_kport_fputs(const char *s, FILE *f);
size_t cxlssd_kport_fwrite(const void *p, size_t size, size_t n, FILE *f);
#define vfprintf cxlssd_kport_vfprintf
#define fprintf cxlssd_kport_fprintf
#define fputs cxlssd_kport_fputs
#define fwrite cxlssd_kport_fwrite
#define fputc(c, f) cxlssd_kport_fprintf((f), "%c", (c))
/* Releases the buffer (the kernel has no fclose). */
void cxlssd_kfile_release(FILE *f);
#endif
