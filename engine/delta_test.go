package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// deltaFile is a source file of some 6 KiB, version k of it with k
// one-line edits.
func deltaFile(k int) string {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "\tx%d := compute(%d, \"line\") // line %d\n", i, i*i, i)
		if i < k {
			fmt.Fprintf(&b, "\t// edit %d\n", i)
		}
	}
	return b.String()
}

// deltaHistory saves src/main.go, then edits of it, one checkpoint per
// version, and returns the fixture and each version's checkpoint.
func deltaHistory(t *testing.T, edits int) (*fixture, []ID) {
	f := newFixture(t, testtree.Dir{"src": testtree.Dir{"main.go": testtree.File{Content: deltaFile(0)}},
		"README": testtree.File{Content: "read me\n"}})
	cps := []ID{f.save("v0").ID}
	for k := 1; k <= edits; k++ {
		f.write("src/main.go", deltaFile(k))
		cps = append(cps, f.save(fmt.Sprintf("v%d", k)).ID)
	}
	return f, cps
}

// catVersions checks that every checkpoint of cps holds version k of
// src/main.go, read through Cat.
func catVersions(t *testing.T, e *Engine, cps []ID, first int) {
	t.Helper()
	for i, cp := range cps {
		r, _, err := e.Cat(context.Background(), "", cp.String(), "src/main.go")
		if err != nil {
			t.Fatalf("cat of version %d: %v", first+i, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != deltaFile(first+i) {
			t.Fatalf("cat of version %d: %d bytes, %v; want the version's %d", first+i, len(got), err, len(deltaFile(first+i)))
		}
	}
}

// fileLocator returns the locator of path's content at checkpoint cp.
func fileLocator(t *testing.T, f *fixture, cp ID, path string) (objects.ID, objects.Locator) {
	t.Helper()
	ents, err := f.e.Ls(context.Background(), "", cp.String(), path)
	if err != nil || len(ents) != 1 {
		t.Fatalf("ls %s: %v, %v", path, ents, err)
	}
	loc, found, err := f.e.db.Locator(objects.ID(ents[0].ID))
	if err != nil || !found {
		t.Fatalf("locator of %s: %v, %v", path, found, err)
	}
	return objects.ID(ents[0].ID), loc
}

// A save stores an edited file as a delta against the version the
// previous save stored, and every version reads back and verifies.
func TestSaveStoresEditsAsDeltas(t *testing.T) {
	f, cps := deltaHistory(t, 4)
	for k, cp := range cps {
		if _, loc := fileLocator(t, f, cp, "src/main.go"); loc.Delta() != (k > 0) {
			t.Fatalf("version %d: locator %+v; want a delta for every edit", k, loc)
		}
	}
	catVersions(t, f.e, cps, 0)
	mustVerify(t, f.e)
}

// A collection that drops the checkpoints of a delta's base keeps the base
// for the delta: every remaining version reads back, and the store
// verifies, with every pack rewritten and after reopening.
func TestGCKeepsTheBaseOfALiveDelta(t *testing.T) {
	f, cps := deltaHistory(t, 3)
	res, err := f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 1}, RewriteBelow: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.CheckpointsDeleted != 3 {
		t.Fatalf("gc dropped %d checkpoints, want 3", res.CheckpointsDeleted)
	}
	f.open(Options{})
	catVersions(t, f.e, cps[3:], 3)
	mustVerify(t, f.e)
	f.write("src/main.go", deltaFile(4))
	cp := f.save("v4").ID
	catVersions(t, f.e, []ID{cp}, 4)
	mustVerify(t, f.e)
}

// Damage to the base of a delta is found by verify at the file the delta
// holds, and its read fails with the corruption mark.
func TestVerifyFindsADamagedDeltaBase(t *testing.T) {
	f, cps := deltaHistory(t, 1)
	base, _ := fileLocator(t, f, cps[0], "src/main.go")
	editPack(t, f, ID(base), func(b []byte, loc objects.Locator) {
		end := loc.Offset + int64(loc.Length)
		b[end-5] ^= 0x5a
	})
	wantProblem(t, f, false, cps[1], "src/main.go", "")
	r, _, err := f.e.Cat(context.Background(), "", cps[1].String(), "src/main.go")
	if err == nil {
		_, err = io.ReadAll(r)
		r.Close()
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("cat of the delta: %v, want ErrCorrupt", err)
	}
}

// A store with deltas pushed and cloned restores every version
// byte-exact, and the clone verifies: the remote holds each delta's
// content whole.
func TestPushAndCloneOfAStoreWithDeltas(t *testing.T) {
	eachRemote(t, func(t *testing.T, open func(*testing.T) (Backend, string)) {
		b, url := open(t)
		f, cps := deltaHistory(t, 3)
		pushAll(t, f, b, url)
		g, _, err := cloneInto(t, b, url)
		if err != nil {
			t.Fatal(err)
		}
		assertSameTree(t, f.read(), g.read())
		catVersions(t, g.e, cps, 0)
		mustVerify(t, g.e)
		// The clone's own saves make deltas again, though its restore left
		// no stat cache: the previous version is the parent checkpoint's.
		g.write("src/main.go", deltaFile(5))
		cp := g.save("v5").ID
		if _, loc := fileLocator(t, g, cp, "src/main.go"); !loc.Delta() {
			t.Fatalf("an edit saved in the clone: locator %+v, want a delta", loc)
		}
		catVersions(t, g.e, []ID{cp}, 5)
	})
}
