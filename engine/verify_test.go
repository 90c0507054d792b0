package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// corruptFixture saves a small workspace and returns it with the
// checkpoint and the blob id of src/lib/util.go.
func corruptFixture(t *testing.T) (*fixture, *SaveResult, ID) {
	f := newFixture(t, testtree.Dir{
		"README": testtree.File{Content: strings.Repeat("readme ", 40)},
		"src": testtree.Dir{"lib": testtree.Dir{
			"util.go": testtree.File{Content: strings.Repeat("package lib // util\n", 30)},
		}},
	})
	res := f.save("one")
	ents, err := f.e.Ls(context.Background(), "", "HEAD", "src/lib/util.go")
	if err != nil {
		t.Fatal(err)
	}
	return f, res, ents[0].ID
}

// wantProblem runs Verify and checks it fails with ErrCorrupt and a
// problem on path whose message contains text.
func wantProblem(t *testing.T, f *fixture, quick bool, cp ID, path, text string) {
	t.Helper()
	rep, err := f.e.Verify(context.Background(), VerifyOptions{Quick: quick})
	if !errors.Is(err, ErrCorrupt) || rep == nil {
		t.Fatalf("verify: %v, want ErrCorrupt with a report", err)
	}
	for _, p := range rep.Problems {
		if p.Path == path && p.Checkpoint == cp && strings.Contains(p.String(), text) {
			return
		}
	}
	t.Fatalf("no problem at %s mentioning %q in %v", path, text, rep.Problems)
}

// editPack rewrites the pack holding blob id through edit, given the
// pack's bytes and the blob's locator, and reopens the store so that no
// cached pack handle hides the change.
func editPack(t *testing.T, f *fixture, id ID, edit func(b []byte, loc objects.Locator)) {
	t.Helper()
	editPackInPlace(t, f, id, edit)
	f.open(Options{})
}

// editPackInPlace is editPack with the engine left open: the pack file is
// rewritten in place, so its open handles read the change.
func editPackInPlace(t *testing.T, f *fixture, id ID, edit func(b []byte, loc objects.Locator)) {
	t.Helper()
	loc, _, err := f.e.db.Locator(objects.ID(id))
	if err != nil {
		t.Fatal(err)
	}
	pack := f.e.blobs.PackPath(loc.Pack)
	b, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	edit(b, loc)
	if err := os.WriteFile(pack, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCleanStore(t *testing.T) {
	t.Parallel()
	f, _, _ := corruptFixture(t)
	rep := mustVerify(t, f.e)
	if rep.Checkpoints != 1 || rep.Trees != 3 || rep.Blobs != 2 || rep.BytesHashed == 0 {
		t.Fatalf("report = %+v", rep)
	}
	quick, err := f.e.Verify(context.Background(), VerifyOptions{Quick: true})
	if err != nil || quick.BytesHashed != 0 {
		t.Fatalf("quick verify = %+v, %v", quick, err)
	}
}

func TestVerifyFindsFlippedByte(t *testing.T) {
	t.Parallel()
	f, cp, id := corruptFixture(t)
	editPack(t, f, id, func(b []byte, loc objects.Locator) { b[loc.Offset+int64(loc.Length)-3] ^= 0x40 })
	wantProblem(t, f, false, cp.ID, "src/lib/util.go", "blob "+id.Short())
	if _, err := f.e.Verify(context.Background(), VerifyOptions{Quick: true}); err != nil {
		t.Fatalf("quick verify does not re-hash content, yet: %v", err)
	}
	if _, err := f.e.GC(context.Background(), GCOptions{RewriteBelow: 1}); err != nil {
		t.Fatalf("gc with nothing to rewrite: %v", err)
	}
}

func TestVerifyFindsMissingPack(t *testing.T) {
	t.Parallel()
	f, cp, _ := corruptFixture(t)
	packs, _ := filepath.Glob(filepath.Join(f.store, "packs", "*.pack"))
	for _, p := range packs {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	f.open(Options{})
	for _, quick := range []bool{false, true} {
		wantProblem(t, f, quick, cp.ID, "src/lib/util.go", "missing")
		wantProblem(t, f, quick, cp.ID, "README", "missing")
	}
}

func TestVerifyFindsDanglingTree(t *testing.T) {
	t.Parallel()
	f, cp, _ := corruptFixture(t)
	ents, err := f.e.Ls(context.Background(), "", "HEAD", "src")
	if err != nil {
		t.Fatal(err)
	}
	b := f.e.db.NewBatch()
	b.DeleteTree(objects.ID(ents[0].ID)) // src/lib
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	wantProblem(t, f, true, cp.ID, "src/lib", "tree "+ents[0].ID.Short()+" missing")
	if _, err := f.e.GC(context.Background(), GCOptions{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("gc over a damaged store: %v, want ErrCorrupt and nothing collected", err)
	}
}

// TestVerifyFindsDamagedPackHeader damages the header of the pack holding
// a blob: its records still verify one by one, but no locator into the
// pack can be trusted, and the quick check must say so as the full one does.
func TestVerifyFindsDamagedPackHeader(t *testing.T) {
	t.Parallel()
	f, cp, id := corruptFixture(t)
	editPack(t, f, id, func(b []byte, _ objects.Locator) { b[2] ^= 0x20 }) // inside the magic
	for _, quick := range []bool{true, false} {
		wantProblem(t, f, quick, cp.ID, "src/lib/util.go", "bad pack header")
	}
	rep, _ := f.e.Verify(context.Background(), VerifyOptions{Quick: true})
	if rep.BytesHashed != 0 {
		t.Fatalf("quick verify hashed %d bytes", rep.BytesHashed)
	}
}

// Verify reads the blobs in the order they lie in the packs, through one
// read session; it still names every damaged file, and only those, when
// the damage is in members of one group or in one chunk of a large file.
func TestVerifyNamesEachDamagedFileOfAGroup(t *testing.T) {
	t.Parallel()
	tree := testtree.Dir{}
	for i := range 80 {
		tree[fmt.Sprintf("f%03d.txt", i)] = testtree.File{Content: strings.Repeat(fmt.Sprintf("line of file %03d\n", i), 1200)}
	}
	var big strings.Builder
	for i := range 400_000 {
		fmt.Fprintf(&big, "big line %07d\n", i)
	}
	tree["big.txt"] = testtree.File{Content: big.String()}
	f := newFixture(t, tree)
	// Written raw, every file's bytes can be found in the packs.
	f.open(Options{DeferCompression: true})
	cp := f.save("one")
	for _, needle := range []string{"line of file 010\n", "line of file 011\n", "line of file 055\n", "big line 0200000\n"} {
		damageFirst(t, f, needle)
	}
	f.open(Options{})
	rep, err := f.e.Verify(context.Background(), VerifyOptions{})
	if !errors.Is(err, ErrCorrupt) || rep == nil {
		t.Fatalf("verify: %v, want ErrCorrupt with a report", err)
	}
	var got []string
	for _, p := range rep.Problems {
		if p.Checkpoint != cp.ID {
			t.Errorf("problem %v names checkpoint %s, want %s", p, p.Checkpoint.Short(), cp.ID.Short())
		}
		got = append(got, p.Path)
	}
	slices.Sort(got)
	if want := []string{"big.txt", "f010.txt", "f011.txt", "f055.txt"}; !slices.Equal(got, want) {
		t.Fatalf("verify named %q, want %q", got, want)
	}
}

// damageFirst flips a byte of the first occurrence of needle in the
// store's packs.
func damageFirst(t *testing.T, f *fixture, needle string) {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(f.store, "packs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pack := range packs {
		b, err := os.ReadFile(pack)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, []byte(needle)); i >= 0 {
			b[i+len(needle)/2] ^= 0x20
			if err := os.WriteFile(pack, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%q is in no pack", needle)
}

// A group record is checked whole once its live files check: damage to a
// file no checkpoint holds any more (a dead member, which a push would
// still upload and a fetch reject) is a store-level locator problem that
// names no file.
func TestVerifyFindsDamageToADeadMemberOfAGroup(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{
		"kept.txt": testtree.File{Content: strings.Repeat("kept line\n", 500)},
		"gone.txt": testtree.File{Content: strings.Repeat("gone line\n", 500)},
	})
	f.open(Options{DeferCompression: true})
	ctx := context.Background()
	if _, err := f.e.Save(ctx, SaveOptions{Task: "scratch"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	f.save("kept only")
	if _, err := f.e.Drop(ctx, "scratch"); err != nil {
		t.Fatal(err)
	}
	mustVerify(t, f.e)
	damageFirst(t, f, "gone line\n")
	f.open(Options{})
	rep, err := f.e.Verify(ctx, VerifyOptions{})
	if !errors.Is(err, ErrCorrupt) || rep == nil || len(rep.Problems) != 1 {
		t.Fatalf("verify: %v, %+v; want one problem", err, rep)
	}
	if p := rep.Problems[0]; p.Kind != "locator" || p.Path != "" || !strings.Contains(p.Message, "group does not match its id") {
		t.Fatalf("problem %+v, want a locator problem naming no file", p)
	}
}

// Verify reads every record from disk: damage to a version the engine
// still keeps in memory, having just stored it as a delta (which the
// reads of a restore or a diff would take from there), is found.
func TestVerifyFindsDamageToAVersionKeptInMemory(t *testing.T) {
	t.Parallel()
	f, _, _ := corruptFixture(t)
	var table strings.Builder
	for i := range 60 {
		fmt.Fprintf(&table, "var v%d = %#x\n", i, uint64(i+1)*0x9e3779b97f4a7c15)
	}
	f.write("src/lib/table.go", table.String())
	f.save("two")
	f.write("src/lib/table.go", table.String()+"// edited\n")
	three := f.save("three")
	ents, err := f.e.Ls(context.Background(), "", "HEAD", "src/lib/table.go")
	if err != nil {
		t.Fatal(err)
	}
	id := ents[0].ID
	if loc, _, err := f.e.db.Locator(objects.ID(id)); err != nil || !loc.Delta() {
		t.Fatalf("the edit's locator %+v, %v: want a delta record", loc, err)
	}
	editPackInPlace(t, f, id, func(b []byte, loc objects.Locator) { b[loc.Offset+int64(loc.Length)-3] ^= 0x40 })
	wantProblem(t, f, false, three.ID, "src/lib/table.go", "blob "+id.Short())
}
