"""The TAP producer of the project's Python tests (tests/tap.h is the C
one; tests/run reads both):

    tap.ok(cond, what, diag=None)   "ok N - what" / "not ok N - what" and,
                                    on failure, @diag as "# " lines
    tap.skip(what, why)             "ok N - what # SKIP why"
    tap.diag(text)                  "# " lines
    tap.skip_all(why)               "1..0 # SKIP why", exit status 0
    sys.exit(tap.done())            the plan "1..N"; 1 if anything failed

A test that needs separate counts makes its own Tap()."""

import sys


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what, diag=None):
        self.n += 1
        print(f"{'ok' if cond else 'not ok'} {self.n} - {what}", flush=True)
        if not cond:
            self.failed += 1
            if diag:
                self.diag(diag)
        return cond

    def skip(self, what, why):
        self.n += 1
        print(f"ok {self.n} - {what} # SKIP {why}", flush=True)

    @staticmethod
    def diag(text):
        for line in str(text).splitlines():
            print(f"# {line}")
        sys.stdout.flush()

    @staticmethod
    def skip_all(why):
        print(f"1..0 # SKIP {why}", flush=True)
        sys.exit(0)

    def done(self):
        print(f"1..{self.n}", flush=True)
        return 1 if self.failed else 0


_tap = Tap()
ok, skip, diag, skip_all, done = (_tap.ok, _tap.skip, _tap.diag,
                                  _tap.skip_all, _tap.done)
