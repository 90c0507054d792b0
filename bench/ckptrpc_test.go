//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/jsonrpc"
	"github.com/ckpt/ckpt/internal/testbound"
)

// The embedded host's system runs the bench's whole sequence against `ckpt
// serve` on stdio, twice (a new serve process and store per repetition):
// every operation is timed with the serve process's peak RSS, the diff
// finds exactly the edited files, the restore undoes them, and the system
// has its columns in the tables. The long tests run the ckpt binary
// itself; the short ones this test binary serving as it (serveAsCkpt).
func TestRPCSystemOnTinyCorpus(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	bin, env := ckptServe(t)
	m := tinyCorpus(t)
	rpc := newRPC(bin, m.Root, work, env)
	b := &bench{opts: options{scale: "tiny", seed: 1, reps: 2, restores: 2, edits: 10, added: 3, pause: 10 * time.Millisecond}, ws: m.Root, m: m, systems: []system{rpc}}
	b.report = newReport(b.opts)
	defer b.closeServers()
	for rep := range b.opts.reps {
		if err := b.sequence(ctx, rep, rpc); err != nil {
			t.Fatal(err)
		}
	}
	// A param the protocol does not know is refused, not ignored: the
	// params above are the protocol's own names.
	var jerr *jsonrpc.Error
	if _, err := rpc.call(ctx, "save", map[string]string{"msg": "renamed"}, nil); !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("save with an unknown param: %v, want invalid params", err)
	}
	rpc.close()
	b.report.finish()
	if b.report.Corpus.CkptFiles < m.Captured {
		t.Fatalf("the table's header says ckpt captured %d files, the corpus has %d", b.report.Corpus.CkptFiles, m.Captured)
	}
	for _, o := range opLabels {
		want := b.opts.reps // a first save and an edit cycle per repetition
		if o.op == opRestore || o.op == opRedo {
			want *= b.opts.restores
		}
		if s := b.report.get(sysRPC, o.op, qSeconds); s == nil || len(s.Values) != want || s.Min <= 0 {
			t.Fatalf("%s: times %+v, want %d", o.op, s, want)
		}
		if rss := b.report.get(sysRPC, o.op, qRSS); rss == nil || rss.Min <= 0 {
			t.Fatalf("%s: peak RSS %+v, want the serve process's", o.op, rss)
		}
	}
	if w, d := b.report.get(sysRPC, opRestore, qReportedWritten), b.report.get(sysRPC, opRestore, qDeleted); w.Median != 10 || d.Median != 3 {
		t.Fatalf("restore wrote %v and deleted %v, want 10 and 3", w.Median, d.Median)
	}
	if dec, all := b.report.get(sysRPC, opDiff, qDecode), b.report.get(sysRPC, opDiff, qSeconds); dec == nil || dec.Min <= 0 || dec.Max > all.Max {
		t.Fatalf("diff's decoding %+v, want a part of its time %+v", dec, all)
	}
	if w, d := b.report.get(sysRPC, opRedo, qReportedWritten), b.report.get(sysRPC, opRedo, qDeleted); w.Median != 13 || d.Median != 0 {
		t.Fatalf("redo wrote %v and deleted %v, want 13 and 0", w.Median, d.Median)
	}
	// Where each restore's time went, as the restore itself says: every
	// phase recorded for every restore, the files' writing took time, and
	// the phases leave the call's own time as the rest.
	for _, ph := range restorePhases {
		if m := b.report.get(sysRPC, opRestore, phaseQuantity(ph.name)); m == nil || len(m.Values) != b.opts.reps*b.opts.restores {
			t.Fatalf("restore phase %s: %+v, want one per restore", ph.name, m)
		}
	}
	if w := b.report.get(sysRPC, opRedo, phaseQuantity("write")); w.Min <= 0 {
		t.Fatalf("redo's writing took %+v, want > 0", w)
	}
	if rest := b.report.remainder(sysRPC, opRestore, b.report.get(sysRPC, opRestore, qSeconds)); rest.Min <= 0 {
		t.Fatalf("restore's time outside its phases %+v, want > 0 (the call)", rest)
	}
	var md bytes.Buffer
	b.report.WriteMarkdown(&md)
	for _, want := range []string{"| operation | ckpt stdio JSON-RPC | floor | git ÷ JSON-RPC | JSON-RPC ÷ floor |", "| JSON-RPC: peak RSS so far | JSON-RPC: inotify watches | JSON-RPC: of the time, decoding the result |",
		"| where a restore's time went (median ms) | JSON-RPC: restore | JSON-RPC: redo |",
		"caches warm, 10 ms between the edit and its save (untimed, every system), 2 restores and redos in each;"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// ckptServe returns the program TestRPCSystemOnTinyCorpus starts as ckpt
// and the environment to start it in (a HOME of the test's own): with the
// long tests, the ckpt binary, built where the last test run left it, so
// that go build finds it up to date and skips the link (seconds to a
// minute on a loaded machine) unless ckpt changed; without them, this
// test binary serving as ckpt (serveAsCkptEnv).
func ckptServe(t *testing.T) (bin string, env []string) {
	t.Helper()
	env = append(os.Environ(), "HOME="+t.TempDir())
	if !testbound.LongTests() {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		return self, append(env, serveAsCkptEnv+"=1")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	bin, err = buildCkpt(context.Background(), filepath.Join(cache, "ckpt-bench-test"))
	if err != nil {
		t.Fatal(err)
	}
	return bin, env
}
