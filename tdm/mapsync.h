/* MAP_SYNC and MAP_SHARED_VALIDATE, for C libraries whose headers lack them */
#ifndef TDM_MAPSYNC_H
#define TDM_MAPSYNC_H

#include <sys/mman.h>

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

#endif
