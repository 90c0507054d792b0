package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/bench/corpus"
)

// tinyCorpus generates the tiny corpus of seed 1 in a directory of the
// test's own.
func tinyCorpus(t *testing.T) *corpus.Manifest {
	t.Helper()
	cfg, err := corpus.ForScale("tiny", 1)
	if err != nil {
		t.Fatal(err)
	}
	m, err := corpus.Generate(context.Background(), filepath.Join(t.TempDir(), "ws"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
