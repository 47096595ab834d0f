/* Model portability (kernel): a pthread mutex is a kernel mutex (the
 * FTL's lock: held for table updates, never across a NAND wait). */
#ifndef CXLSSD_KPORT_PTHREAD_H
#define CXLSSD_KPORT_PTHREAD_H
#include "kport.h"
typedef struct mutex pthread_mutex_t;
#define pthread_mutex_init(m, attr) ({ (void)(attr); mutex_init(m); 0; })
#define pthread_mutex_destroy(m) mutex_destroy(m)
#define pthread_mutex_lock(m) mutex_lock(m)
#define pthread_mutex_unlock(m) mutex_unlock(m)
#endif
