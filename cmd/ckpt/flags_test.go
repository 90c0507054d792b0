package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

// Every size flag takes units; --max-file-size also takes -1 (no limit).
func TestSizeFlagParsesUnits(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"100MiB": 100 << 20, "2G": 2 << 30, "512": 512, "1.5k": 1536, "-1": -1, "0": 0} {
		var n int64
		if err := (&sizeFlag{&n}).Set(in); err != nil || n != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	var n int64
	if err := (&sizeFlag{&n}).Set("lots"); err == nil {
		t.Error("Set(\"lots\") succeeded")
	}
}

// The CLI, not the engine, turns typed errors into advice about its flags.
func TestAdviceComesFromTypedErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&engine.BusyError{Store: "/s", Holder: "pid 1 (ckpt save)"}, "store busy: pid 1 (ckpt save) holds the lock on /s; wait for it to finish or raise --lock-timeout"},
		{&engine.WorkspaceMismatchError{Store: "/s", Recorded: "/a", Workspace: "/b"}, "store belongs to another workspace: store /s records workspace /a, not /b; pass --store with another directory"},
		{&engine.WrongTaskError{Task: "other", Want: "default"}, "; pass --task other"},
		{&engine.CorruptError{Store: "/s", Err: errors.New("bad pack")}, "store corrupt: bad pack (store at /s); run `ckpt verify`"},
		{&engine.CorruptError{Store: "remote origin", OnRemote: true, Err: errors.New("bad object")}, "store corrupt: bad object (store at remote origin); the damage is in the remote's copy, not in this store"},
		{fmt.Errorf("%w: x", engine.ErrUnknownRef), "unknown ref: x"},
	} {
		if got := protocol.Message(tc.err); !strings.HasSuffix(got, tc.want) {
			t.Errorf("protocol.Message(%T) = %q, want …%q", tc.err, got, tc.want)
		}
	}
}

// failingWriter fails every write, as a closed pipe does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A --json document that cannot be written makes the command fail.
func TestFailedJSONWriteExitsNonZero(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var stderr bytes.Buffer
	code := run([]string{"-C", e.ws, "--store", e.store, "--json", "list"}, strings.NewReader(""), failingWriter{}, &stderr)
	if code != protocol.ExitError || !strings.Contains(stderr.String(), "broken pipe") {
		t.Fatalf("exit %d, stderr %q; want %d naming the write error", code, stderr.String(), protocol.ExitError)
	}
}

// --version is spelled out: -v is not a shorthand for it (git and jj
// spell it out too), so -v is an unknown flag.
func TestVersionIsSpelledOut(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--version"}, strings.NewReader(""), &out, &errOut); code != 0 || !strings.Contains(out.String(), version) {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"-v"}, strings.NewReader(""), &out, &errOut); code != protocol.ExitUsage || !strings.Contains(errOut.String(), "-v") || out.Len() != 0 {
		t.Fatalf("-v: exit %d, stdout %q, stderr %q; want a usage error", code, out.String(), errOut.String())
	}
	// Under --json, before or after it, the version is a JSON document.
	for _, args := range [][]string{{"--json", "--version"}, {"--version", "--json"}} {
		out.Reset()
		var v struct{ Version string }
		if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 || json.Unmarshal(out.Bytes(), &v) != nil || v.Version != version {
			t.Fatalf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
}
