//go:build linux

package main

import (
	"os"
	"path/filepath"
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
