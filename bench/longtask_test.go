//go:build linux

package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two agents with the same seed make the same edits.
func TestAgentIsDeterministic(t *testing.T) {
	var trees [2]map[string]string
	for i := range trees {
		m := tinyCorpus(t)
		ag, err := newAgent(m.Root, m.Text, m.Dirs, 7)
		if err != nil {
			t.Fatal(err)
		}
		for range 30 {
			if _, err := ag.act(); err != nil {
				t.Fatal(err)
			}
		}
		trees[i] = map[string]string{}
		if err := walkFiles(m.Root, func(p string) error {
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(m.Root, p)
			trees[i][rel] = string(data)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(trees[0]) != len(trees[1]) {
		t.Fatalf("%d files against %d", len(trees[0]), len(trees[1]))
	}
	for p, data := range trees[0] {
		if trees[1][p] != data {
			t.Fatalf("%s differs between two runs of the same seed", p)
		}
	}
}

// A long task of one-line edits on a small tree: the edits' history costs
// ckpt's packs a delta's bytes per edit, far less than the edited files
// compressed whole; the watched saves missed nothing, and the shadow
// repository shrinks under git gc --aggressive.
func TestLongTaskOfOneLineEdits(t *testing.T) {
	src := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return err nil if for range package import store pack blob chunk index tree save restore diff")
	for i := range 40 {
		var b strings.Builder
		for line := range 150 {
			fmt.Fprintf(&b, "%d", line)
			for range 6 {
				fmt.Fprintf(&b, " %s%d", words[rng.IntN(len(words))], rng.IntN(100))
			}
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d.go", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	measure := func(steps int) *LongTask {
		r, err := longTask(context.Background(), options{corpus: src, seed: 1, dir: t.TempDir()}, editsOneLine, steps)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	base, long := measure(0), measure(12)
	if long.Files != 40 || long.Edited != 12*oneLineEdits || long.Added+long.Deleted != 0 || !long.Settled {
		t.Fatalf("%d files, %d edits, %d added, %d deleted, settled %v; want 40 files, %d edits, none added or deleted, settled",
			long.Files, long.Edited, long.Added, long.Deleted, long.Settled, 12*oneLineEdits)
	}
	grown := int64((long.CkptGCPacksMiB - base.CkptGCPacksMiB) * (1 << 20))
	t.Logf("%d one-line edits grew the packs by %d bytes", long.Edited, grown)
	if limit := int64(long.Edited) * 400; grown <= 0 || grown > limit {
		t.Fatalf("%d one-line edits grew the packs by %d bytes, want under %d (a delta each)", long.Edited, grown, limit)
	}
	if long.CkptGCIndexMiB <= 0 || long.GitAggressiveMiB <= 0 || long.GitAggressiveMiB >= long.GitMiB {
		t.Fatalf("index %.3f MiB, shadow .git %.3f MiB, after git gc --aggressive %.3f MiB", long.CkptGCIndexMiB, long.GitMiB, long.GitAggressiveMiB)
	}
}
