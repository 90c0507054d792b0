package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
)

// manyFiles writes n small distinct files under ws, in directories of 100.
func manyFiles(t *testing.T, ws string, n int, tag string) {
	t.Helper()
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%05d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "%s %d", tag, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// storeState maps every file under dir to its size and modification time.
func storeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// openErr opens f's store with opts and returns the error, closing any engine.
func (f *fixture) openErr(opts Options) error {
	opts.StoreDir = f.store
	e, err := Open(context.Background(), f.ws, opts)
	if err == nil {
		e.Close()
	}
	return err
}

// smallMemTable is the index memtable size of the tests that need the
// index to flush its writes to tables: a few dozen files fill it.
const smallMemTable = 4 << 10

func TestVerifyReportsADamagedIndexTableAsCorruptNamingIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{})
	f.open(Options{hooks: testHooks{indexMemTableSize: smallMemTable}})
	manyFiles(t, f.ws, 100, "v")
	f.save("many") // the memtable fills: the save's writes reach tables
	f.e.Close()
	f.e = nil
	tables, _ := filepath.Glob(filepath.Join(f.store, "index", "*.sst"))
	var table string
	var size int64
	for _, p := range tables {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			table, size = p, fi.Size()
		}
	}
	if table == "" {
		t.Fatal("the save left no index table to damage")
	}
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(table, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, quick := range []bool{false, true} {
		e, err := Open(context.Background(), f.ws, Options{StoreDir: f.store, ReadOnly: true})
		if err == nil {
			_, err = e.Verify(context.Background(), VerifyOptions{Quick: quick})
			e.Close()
		}
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(table)) {
			t.Errorf("verify (quick=%v) of a damaged table: %v, want ErrCorrupt naming %s", quick, err, filepath.Base(table))
		}
	}
}

func TestMissingManifestMarkerIsCorruptAndTouchesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
	f.save("one")
	f.e.Close()
	f.e = nil
	markers, _ := filepath.Glob(filepath.Join(f.store, "index", "marker.manifest.*"))
	if len(markers) != 1 {
		t.Fatalf("markers: %v", markers)
	}
	if err := os.Remove(markers[0]); err != nil {
		t.Fatal(err)
	}
	before := storeState(t, filepath.Join(f.store, "index")) + storeState(t, filepath.Join(f.store, "packs"))
	for _, readOnly := range []bool{false, true} {
		if err := f.openErr(Options{ReadOnly: readOnly}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ReadOnly=%v: open without the MANIFEST marker: %v, want ErrCorrupt", readOnly, err)
		}
	}
	if after := storeState(t, filepath.Join(f.store, "index")) + storeState(t, filepath.Join(f.store, "packs")); after != before {
		t.Errorf("opening changed the store:\nbefore\n%s\nafter\n%s", before, after)
	}
}

func TestPacksWithoutIndexAreCorrupt(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"removed", "emptied"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
			f.save("one")
			f.e.Close()
			f.e = nil
			idx := filepath.Join(f.store, "index")
			if err := os.RemoveAll(idx); err != nil {
				t.Fatal(err)
			}
			if how == "emptied" {
				if err := os.Mkdir(idx, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			packs := storeState(t, filepath.Join(f.store, "packs"))
			for _, readOnly := range []bool{false, true} {
				err := f.openErr(Options{ReadOnly: readOnly})
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "index missing but 1 packs present") {
					t.Errorf("ReadOnly=%v: %v, want ErrCorrupt: index missing but 1 packs present", readOnly, err)
				}
			}
			if storeState(t, filepath.Join(f.store, "packs")) != packs {
				t.Error("opening changed the packs")
			}
			if _, err := os.Stat(filepath.Join(idx, "MANIFEST-000001")); err == nil {
				t.Error("opening created an index over the packs")
			}
		})
	}
}

func TestGarbageIndexMetadataIsCorruptWithPathsThatArePaths(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{"OPTIONS-*", "MANIFEST-*"} {
		t.Run(strings.TrimSuffix(pattern, "-*"), func(t *testing.T) {
			f := newFixture(t, testtree.Dir{"a": testtree.File{Content: "a"}})
			f.save("one")
			f.e.Close()
			f.e = nil
			files, _ := filepath.Glob(filepath.Join(f.store, "index", pattern))
			for _, p := range files {
				if err := os.WriteFile(p, []byte("invalid key=value syntax\n\x00\xff garbage"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := f.openErr(Options{})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			msg := err.Error()
			idx := filepath.Join(f.store, "index")
			if !strings.HasPrefix(msg, "store corrupt: ") || !strings.Contains(msg, idx+" ") || strings.Contains(msg, idx+"/invalid") {
				t.Errorf("message %q: want \"store corrupt: …\" naming %s as a path", msg, idx)
			}
		})
	}
}

func TestIndexBackgroundErrorsBecomeErrorEvents(t *testing.T) {
	needAbandonedIndexFilesFreed(t)
	t.Parallel()
	f := newFixture(t, testtree.Dir{})
	var mu sync.Mutex
	var events []Event
	h := newInjector()
	f.open(Options{OnEvent: func(ev Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}, hooks: testHooks{storeFS: h.fs(), indexMemTableSize: smallMemTable}})
	h.failTables(errnoEACCES)
	manyFiles(t, f.ws, 100, "bg") // enough to fill the memtable, whose flush then fails
	_, err := f.e.Save(context.Background(), SaveOptions{Message: "big"})
	err = errors.Join(err, f.e.Close())
	f.e = nil
	if !errors.Is(err, errnoEACCES) {
		t.Fatalf("save with unwritable tables: %v, want EACCES", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, ev := range events {
		if ev.Type == EventError && errors.Is(ev.Err, errnoEACCES) && strings.Contains(ev.Err.Error(), "index background work") {
			return
		}
	}
	t.Errorf("no error event for the failed flush among %d events", len(events))
}
