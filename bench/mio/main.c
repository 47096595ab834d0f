/* main.c: MIO entry point. */
#include "mio.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    struct mio_config cfg;
    int rc = mio_parse_args(argc, argv, &cfg);
    if (rc < 0)
        rc = cfg.verify ? mio_run_verify(&cfg) : mio_run_chase(&cfg);
    mio_free_config(&cfg);
    return rc;
}
