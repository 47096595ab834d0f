#include "trace/trace-hw_cxl_ssd.h"
