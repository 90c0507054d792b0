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

// Spread returns the points of 0..n-1 a sampled suite tries: every one
// when the long tests are on or n is at most short, otherwise short of
// them (at least two) spread evenly, the first and the last among them. A
// fault suite that injects at every point under the long tests checks an
// even sample of the same points without them.
func Spread(n, short int) []int {
	short = max(short, 2)
	if LongTests() || n <= short {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	out := make([]int, short)
	for i := range out {
		out[i] = i * (n - 1) / (short - 1)
	}
	return out
}
