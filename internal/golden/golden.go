// Package golden keeps the golden files tests compare their output with.
package golden

import (
	"bytes"
	"os"
	"testing"
)

// Match reports whether got equals the golden file at path, and returns
// the file's contents for the caller's message. With update set it writes
// got to path instead and reports a match. A missing golden file fails the
// test, saying to run it with -update.
func Match(t testing.TB, path string, got []byte, update bool) (want []byte, ok bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return got, true
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	return want, bytes.Equal(got, want)
}
