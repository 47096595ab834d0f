#!/bin/sh
# Dependencies of `make bench-tail` beyond the build: cyclictest (Debian's
# rt-tests).  Idempotent.
exec "$(dirname "$0")/../lib/install-command.sh" bench-tail cyclictest rt-tests
