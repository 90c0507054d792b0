package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/remotetest"
)

func openDir(t *testing.T, dir string) remote.Backend {
	t.Helper()
	b, err := remote.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestFileBackendConforms(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) remote.Backend { return openDir(t, t.TempDir()) })
}

// Each Backend value stands for another process or machine on the shared
// directory: only the lock files, not in-process state, keep them apart.
func TestFileBackendConditionalPutsExcludeOtherInstances(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	var backends [n]remote.Backend
	for i := range backends {
		backends[i] = openDir(t, dir)
	}
	for round := range 5 {
		key := fmt.Sprintf("heads/%d", round)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, b := range backends {
			wg.Go(func() {
				data := []byte(fmt.Sprint(round, i))
				_, errs[i] = b.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), remote.IfAbsent())
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, remote.ErrPrecondition):
				t.Fatal(err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d instances created %s", round, won, key)
		}
	}
}

func TestFileBackendLeavesOnlyEscapedNamesAndIgnoresStrayFiles(t *testing.T) {
	dir := t.TempDir()
	b := openDir(t, dir)
	ctx := context.Background()
	if _, err := b.Put(ctx, "Packs/con/x y", bytes.NewReader([]byte("z")), 1, remote.Condition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "%50acks", "%63on", "x%20y")); err != nil {
		t.Fatalf("object file not at its escaped name: %v", err)
	}
	for _, stray := range []string{"README", "Packs", "~tmp/put-1", "%50acks/.DS_Store.", "%50acks/%63on/X"} {
		if err := os.WriteFile(filepath.Join(dir, stray), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	page, err := b.List(ctx, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != "Packs/con/x y" {
		t.Fatalf("List = %+v, want only Packs/con/x y", page.Objects)
	}
}

func TestFileBackendReportsADamagedObjectFile(t *testing.T) {
	dir := t.TempDir()
	b := openDir(t, dir)
	ctx := context.Background()
	if _, err := b.Put(ctx, "obj", bytes.NewReader([]byte("data")), 4, remote.Condition{}); err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{"short", "not an object header, though long enough to be one"} {
		if err := os.WriteFile(filepath.Join(dir, "obj"), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Stat(ctx, "obj"); !errors.Is(err, remote.ErrDamaged) {
			t.Fatalf("Stat of %q = %v, want ErrDamaged", junk, err)
		}
		if _, _, err := b.Get(ctx, "obj"); !errors.Is(err, remote.ErrDamaged) {
			t.Fatalf("Get of %q = %v, want ErrDamaged", junk, err)
		}
	}
}

func TestFileBackendCreatesAMissingDirectoryOnFirstWrite(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "new", "remote")
	b := openDir(t, missing)
	ctx := context.Background()
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenDir created %s before any write: %v", missing, err)
	}
	if _, err := b.Stat(ctx, "heads/x"); !errors.Is(err, remote.ErrNotFound) {
		t.Fatalf("Stat in a missing directory = %v, want ErrNotFound", err)
	}
	if page, err := b.List(ctx, "", "", 0); err != nil || len(page.Objects) != 0 {
		t.Fatalf("List of a missing directory = %+v, %v", page, err)
	}
	if err := b.Delete(ctx, "heads/x"); err != nil {
		t.Fatalf("Delete in a missing directory: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a read or delete created %s: %v", missing, err)
	}
	if _, err := b.Put(ctx, "heads/x", bytes.NewReader([]byte("x")), 1, remote.IfAbsent()); err != nil {
		t.Fatalf("first Put into a missing directory: %v", err)
	}
	if rc, _, err := b.Get(ctx, "heads/x"); err != nil {
		t.Fatal(err)
	} else {
		rc.Close()
	}
	// Another instance, opened before the directory existed, writes too.
	if _, err := openDir(t, missing).Put(ctx, "heads/x", bytes.NewReader([]byte("y")), 1, remote.IfAbsent()); !errors.Is(err, remote.ErrPrecondition) {
		t.Fatalf("second IfAbsent Put = %v, want ErrPrecondition", err)
	}
}

func TestOpenDirRefusesAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.OpenDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("OpenDir(file) = %v, want not a directory", err)
	}
}
