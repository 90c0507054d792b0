package testbound

import (
	"os"
	"testing"
)

// LongEnv names the environment variable that turns the long tests on:
// CKPT_LONG_TESTS=1 runs the suites that take minutes (crash and kill
// loops, every cut point of a push, the browser's scale test, the large
// corpora). .ci/run sets it; without it `go test -race ./...` stays a few
// minutes on a loaded two-core machine.
const LongEnv = "CKPT_LONG_TESTS"

// LongTests reports whether LongEnv asks for the long tests.
func LongTests() bool { return os.Getenv(LongEnv) == "1" }

// Long skips t unless the long tests are on; what says what the test
// does that takes long, for the skip message.
func Long(t testing.TB, what string) {
	t.Helper()
	if !LongTests() {
		t.Skipf("%s: a long test, run with %s=1", what, LongEnv)
	}
}

// Scale returns long when the long tests are on and short otherwise: the
// size of a test whose short form keeps its assertions and whose long form
// repeats them over more cases.
func Scale(short, long int) int {
	if LongTests() {
		return long
	}
	return short
}
