#!/bin/sh
# Install what tracing/ needs from Debian (idempotent): bpftrace for the
# host-side scripts.  linux-perf is optional (README perf recipe).
# Exit status: 0 if bpftrace is usable afterwards, 1 otherwise.
exec "$(dirname "$0")/../bench/lib/install-command.sh" install-deps bpftrace bpftrace
