//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt/ckpt/bench/corpus"
)

// TestMain runs the test binary as the bench's spawn helper when it is
// started as one (startSpawner starts the running binary with "spawn"),
// so that the tests measure through the helper as the bench does, and as
// ckpt serve when serveAsCkptEnv asks for it.
func TestMain(m *testing.M) {
	if os.Getenv(serveAsCkptEnv) == "1" {
		if err := serveAsCkpt(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "ckpt serve:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "spawn" {
		if err := serveSpawn(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "spawn:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

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
