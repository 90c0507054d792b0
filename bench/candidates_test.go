//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPinnedModulesAreExactVersions(t *testing.T) {
	mods, err := pinnedModules()
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) < 10 {
		t.Fatalf("%d pinned modules", len(mods))
	}
	for _, m := range mods {
		path, version, ok := strings.Cut(m, "@")
		if !ok || path == "" || !strings.HasPrefix(version, "v") || strings.ContainsAny(version, "<>=*^~ ") {
			t.Fatalf("%q is not module@exact-version", m)
		}
	}
}

// TestCandidatesOnASmallTree runs "bench compress" on similar source files:
// every candidate stores something, and grouping similar files beats one
// frame per file, in the model and in objects' packs alike.
func TestCandidatesOnASmallTree(t *testing.T) {
	dir := t.TempDir()
	for i := range 200 {
		src := fmt.Sprintf("package p%d\n\nimport \"fmt\"\n\n// Handler%d serves requests.\nfunc Handler%d(name string) string {\n\treturn fmt.Sprintf(\"hello %%s from %d\", name)\n}\n", i%7, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(strings.Repeat(src, 1+i%5)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "c.json")
	if err := runCandidates(context.Background(), []string{"-corpus", dir, "-json", out}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep candidateReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int64{}
	for _, c := range rep.Candidates {
		if c.Bytes <= 0 {
			t.Fatalf("candidate %q stored %d bytes", c.Name, c.Bytes)
		}
		byName[c.Name] = c.Bytes
	}
	if rep.Files != 200 || len(rep.Candidates) != 12 {
		t.Fatalf("%d files, %d candidates", rep.Files, len(rep.Candidates))
	}
	plain, grouped := byName["objects store, per-blob records (today)"], byName["objects store, Options.Groups (kept)"]
	if grouped >= plain || byName["solid groups (1 MiB, blobs ≤ 1 MiB) fastest"] >= byName["per-blob zstd fastest (today)"] {
		t.Fatalf("groups did not beat per-blob frames: %v", byName)
	}
}
