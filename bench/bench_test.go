//go:build linux

package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/bench/corpus"
)

func TestReportSummariesAndTargets(t *testing.T) {
	r := newReport(options{scale: "tiny", reps: 4})
	for _, v := range []float64{4, 1, 3, 2} {
		r.add("git", opFirst, qSeconds, v*10)
		r.add("ckpt-cli", opFirst, qSeconds, v)
	}
	r.add("git", opFirst, qStore, 100)
	r.add("ckpt-cli", opFirst, qStore, 70)
	r.finish()
	m := r.get("ckpt-cli", opFirst, qSeconds)
	if m.Median != 2.5 || m.Min != 1 || m.Max != 4 {
		t.Fatalf("summary %+v, want median 2.5, min 1, max 4", m)
	}
	met := map[string]bool{}
	for _, tg := range r.Targets {
		met[tg.Name] = tg.Met
	}
	if !met["first save: speed-up over shadow git (CLI)"] {
		t.Error("a 10x speed-up does not meet the ≥10x target")
	}
	if v, ok := met["store after first save / shadow .git"]; !ok || v {
		t.Errorf("a 0.7x store met the ≤0.6x target (present %v)", ok)
	}
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "| first save (empty store) | 25.0 s (10.0 s – 40.0 s) | 2.50 s (1.00 s – 4.00 s) |") {
		t.Errorf("markdown lacks the first-save row:\n%s", md.String())
	}
	var doc struct{ XMLName xml.Name }
	if err := xml.Unmarshal(r.chart(), &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Errorf("chart is not an SVG document: %v", err)
	}
}

func TestCountChanges(t *testing.T) {
	before := map[string]fileStamp{"a": {ino: 1}, "b": {ino: 2}, "c": {ino: 3}}
	after := map[string]fileStamp{"a": {ino: 1}, "b": {ino: 9}, "d": {ino: 4}}
	if w, d := countChanges(before, after); w != 2 || d != 1 {
		t.Fatalf("written %d, deleted %d; want 2 and 1", w, d)
	}
}

func TestSplitPieces(t *testing.T) {
	got := splitPieces([][]byte{make([]byte, 2*floorPiece+1), make([]byte, 10)})
	if len(got) != 4 || len(got[2]) != 1 || len(got[3]) != 10 {
		t.Fatalf("pieces of %d", len(got))
	}
}

func TestFloorsOnTinyCorpus(t *testing.T) {
	m := tinyCorpus(t)
	_, files, err := statFloor(m.Root, corpus.IgnoredDirNames)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f, "/node_modules/") || strings.Contains(f, "/.git/") {
			t.Fatalf("stat floor descended into a skipped directory: %s", f)
		}
	}
	// Captured files plus the *.o files ignored beside the sources.
	if len(files) < m.Captured {
		t.Fatalf("stat floor saw %d regular files, the corpus captures %d", len(files), m.Captured)
	}
	_, n, err := hashFloor(files)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		want += info.Size()
	}
	if n != want {
		t.Fatalf("hash floor processed %d bytes, the files hold %d", n, want)
	}
}

// The server without a watcher is a system of its own: its own store, its
// server started with CKPT_WATCHER=none, its times in a column beside the
// watched server's.
func TestServerWithoutWatcherColumn(t *testing.T) {
	env := make([]string, 1, 8)
	env[0] = "HOME=/h"
	var names, stores []string
	for _, s := range newServers("ckpt", "/ws", "/work", env) {
		c := s.(*ckptServer)
		names, stores = append(names, c.name()), append(stores, c.storeDir())
		none := slices.Contains(c.env, "CKPT_WATCHER=none")
		if none != (c.name() == sysServerNoWatcher) {
			t.Errorf("%s: env %q", c.name(), c.env)
		}
	}
	if !slices.Equal(names, []string{sysServer, sysServerNoWatcher}) || stores[0] == stores[1] {
		t.Fatalf("servers %q with stores %q, want the two servers on stores of their own", names, stores)
	}
	r := newReport(options{scale: "tiny", reps: 1})
	r.add("git", opNoChange, qSeconds, 1)
	r.add(sysServer, opNoChange, qSeconds, 0.002)
	r.add(sysServerNoWatcher, opNoChange, qSeconds, 0.25)
	r.finish()
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "| ckpt server | ckpt server, watcher: none |") ||
		!strings.Contains(md.String(), "| 2 ms (2 ms – 2 ms) | 250 ms (250 ms – 250 ms) |") ||
		!strings.Contains(md.String(), "| 500x | 4.00x |") {
		t.Errorf("markdown lacks the server's columns with and without a watcher:\n%s", md.String())
	}
}

// The restore floor rewrites the files it is given with their own content
// and mode, removes the others, and leaves nothing else behind, whether it
// syncs each file or the file system once.
func TestRestoreFloorRewritesAndRemovesExactlyItsFiles(t *testing.T) {
	for _, syncfs := range []bool{false, true} {
		t.Run(fmt.Sprintf("syncfs=%v", syncfs), func(t *testing.T) {
			m := tinyCorpus(t)
			mu, err := corpus.Mutate(m, 1, 10, 3)
			if err != nil {
				t.Fatal(err)
			}
			abs := func(rel string) string { return filepath.Join(m.Root, filepath.FromSlash(rel)) }
			var rewrite, remove []string
			for _, p := range mu.Added { // a restore removes them: so does the floor, after making them again
				if err := os.Remove(abs(p)); err != nil {
					t.Fatal(err)
				}
				remove = append(remove, abs(p))
			}
			if err := os.Chmod(abs(mu.Modified[0]), 0o750); err != nil {
				t.Fatal(err)
			}
			before, err := stampTree(m.Root)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]byte{}
			for _, p := range mu.Modified {
				rewrite = append(rewrite, abs(p))
				if want[abs(p)], err = os.ReadFile(abs(p)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := restoreFloor(rewrite, remove, syncfs); err != nil {
				t.Fatal(err)
			}
			after, err := stampTree(m.Root)
			if err != nil {
				t.Fatal(err)
			}
			if written, deleted := countChanges(before, after); written != len(rewrite) || deleted != 0 {
				t.Fatalf("the floor changed %d files and removed %d; want the %d it rewrites", written, deleted, len(rewrite))
			}
			for name, data := range want {
				got, err := os.ReadFile(name)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s after the floor: %v, content equal %v", name, err, bytes.Equal(got, data))
				}
			}
			if info, err := os.Stat(rewrite[0]); err != nil || info.Mode().Perm() != 0o750 {
				t.Fatalf("mode after the floor: %v (%v), want 0750", info.Mode(), err)
			}
		})
	}
}

// The settled server is a column of its own, only on request: its own
// store, the settle flag set, its times beside the server's.
func TestSettledServerColumn(t *testing.T) {
	c := newSettledServer("ckpt", "/ws", "/work", nil)
	if c.name() != sysServerSettled || !c.settle {
		t.Fatalf("settled server %q, settle %v", c.name(), c.settle)
	}
	for _, s := range newServers("ckpt", "/ws", "/work", nil) {
		if s.storeDir() == c.storeDir() || s.(*ckptServer).settle {
			t.Errorf("%s shares the settled server's store %s or settles", s.name(), c.storeDir())
		}
	}
	r := newReport(options{scale: "tiny", reps: 1})
	for sys, edit := range map[string]float64{"git": 1, sysServer: 0.05, sysServerSettled: 0.1} {
		r.add(sys, opFirst, qSeconds, 1)
		r.add(sys, opEdit, qSeconds, edit)
	}
	r.finish()
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	if !strings.Contains(md.String(), "| ckpt server | ckpt server, settled |") || !strings.Contains(md.String(), "| 20x | 10x |") {
		t.Errorf("the settled column is missing:\n%s", md.String())
	}
}
