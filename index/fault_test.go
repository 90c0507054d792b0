package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ckpt/ckpt/internal/faultfs"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/internal/testbound"
	"github.com/ckpt/ckpt/objects"
)

// putLocators commits n locators tagged tag in batches of 10,000.
func putLocators(db *DB, tag string, n int) error {
	for start := 0; start < n; start += 10000 {
		b := db.NewBatch()
		for i := start; i < min(n, start+10000); i++ {
			b.PutLocator(objects.Sum(fmt.Appendf(nil, "%s%d", tag, i)), objects.Locator{Pack: 1, Offset: int64(i), Length: 1})
		}
		err := b.Commit()
		b.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// dirState maps each file of dir to its size and modification time.
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
	}
	return m
}

func largestTable(t *testing.T, dir string) string {
	t.Helper()
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	var best string
	var size int64
	for _, p := range tables {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatal("no table written")
	}
	return best
}

func TestCorruptTableIsAnErrorNamingTheFileNotAPanic(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	if err := putLocators(db, "x", 60000); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // the log is over walFlushBytes: Close flushes it to a table
		t.Fatal(err)
	}
	table := largestTable(t, dir)
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0xff
	if err := os.WriteFile(table, b, 0o600); err != nil {
		t.Fatal(err)
	}

	var bgErrs []error
	var mu sync.Mutex
	db, err = Open(dir, Options{OnBackgroundError: func(err error) { mu.Lock(); bgErrs = append(bgErrs, err); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.EachLocator(func(objects.ID, objects.Locator) error { return nil })
	if !errors.Is(err, objects.ErrCorrupt) {
		t.Fatalf("scan of a damaged table: %v, want ErrCorrupt", err)
	}
	if !strings.Contains(err.Error(), filepath.Base(table)) {
		t.Errorf("error %q does not name the damaged table %s", err, filepath.Base(table))
	}
	// Point reads after the damage was seen fail the same way or succeed;
	// none panics. Every 37th key reaches every block of the table, the
	// damaged one among them.
	for i := 0; i < 60000; i += 37 {
		if _, _, err := db.Locator(objects.Sum(fmt.Appendf(nil, "x%d", i))); err != nil && !errors.Is(err, objects.ErrCorrupt) {
			t.Fatalf("lookup: %v, want nil or ErrCorrupt", err)
		}
	}
	batch := db.NewBatch()
	batch.SetConfig("k", "v")
	if err := batch.Commit(); !errors.Is(err, objects.ErrCorrupt) {
		t.Errorf("commit on a DB that met corruption: %v, want ErrCorrupt", err)
	}
	batch.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(bgErrs) == 0 {
		t.Error("OnBackgroundError never heard of the corruption")
	}
}

func TestOpenRefusesFilesWithoutManifestMarkerAndTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	if err := putLocators(db, "m", 60000); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	markers, _ := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if len(markers) != 1 {
		t.Fatalf("markers: %v", markers)
	}
	if err := os.Remove(markers[0]); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)
	for _, readOnly := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: readOnly})
		if !errors.Is(err, objects.ErrCorrupt) || !strings.Contains(err.Error(), "marker") {
			t.Fatalf("ReadOnly=%v: open without marker: %v, want ErrCorrupt naming the marker", readOnly, err)
		}
	}
	after := dirState(t, dir)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("open changed the index directory:\nbefore %v\nafter  %v", before, after)
	}
}

func TestOpenGarbageMetadataIsCorruptWithAReadableMessage(t *testing.T) {
	for _, pattern := range []string{"OPTIONS-*", "MANIFEST-*"} {
		t.Run(strings.TrimSuffix(pattern, "-*"), func(t *testing.T) {
			dir := t.TempDir()
			db := openTest(t, dir)
			if err := putLocators(db, "g", 10); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			files, _ := filepath.Glob(filepath.Join(dir, pattern))
			if len(files) == 0 {
				t.Fatalf("no %s", pattern)
			}
			for _, f := range files {
				if err := os.WriteFile(f, []byte("invalid key=value syntax\n\x00\xff garbage"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Open(dir, Options{})
			if !errors.Is(err, objects.ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), dir+"/invalid") {
				t.Errorf("message %q should name %s as a path", err, dir)
			}
		})
	}
}

// injectOn returns an injector failing every op of kind whose path ends in
// suffix with errno, once armed.
func injectOn(kinds []faultfs.OpKind, suffix string, errno syscall.Errno, armed *bool, mu *sync.Mutex) faultfs.Injector {
	return faultfs.InjectorFunc(func(op faultfs.Op) error {
		mu.Lock()
		defer mu.Unlock()
		if *armed && slices.Contains(kinds, op.Kind) && strings.HasSuffix(op.Path, suffix) {
			return &fs.PathError{Op: "inject", Path: op.Path, Err: errno}
		}
		return nil
	})
}

func TestFailedTableWriteFailsWritesInsteadOfRetryingForEver(t *testing.T) {
	cases := []struct {
		kinds []faultfs.OpKind
		errno syscall.Errno
	}{
		{[]faultfs.OpKind{faultfs.OpCreate}, syscall.EACCES},
		{[]faultfs.OpKind{faultfs.OpFileWrite}, syscall.ENOSPC},
		{[]faultfs.OpKind{faultfs.OpFileSync}, syscall.EIO},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.kinds[0], c.errno), func(t *testing.T) {
			dir := wedgedDir(t)
			var mu sync.Mutex
			armed := false
			fsys := faultfs.Wrap(storefs.OS, injectOn(c.kinds, ".sst", c.errno, &armed, &mu))
			var bg []error
			db, err := Open(dir, Options{FS: fsys, OnBackgroundError: func(err error) { mu.Lock(); bg = append(bg, err); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			if err := putLocators(db, "before", 10); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			armed = true
			mu.Unlock()
			testbound.Within(t, testbound.Hang, func() {
				// Enough to fill several memtables: a flush is needed and fails.
				err = putLocators(db, "after", 400000)
				err = errors.Join(err, db.Close())
			})
			if !errors.Is(err, c.errno) {
				t.Fatalf("writes with failing tables: %v, want %v", err, c.errno)
			}
			// A DB wedged by the failure keeps pebble's lock on dir until
			// the process exits: check a copy.
			cp := t.TempDir()
			copyIndex(t, dir, cp)
			db, err = Open(cp, Options{})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer db.Close()
			if _, ok, err := db.Locator(objects.Sum([]byte("before9"))); err != nil || !ok {
				t.Fatalf("a write committed before the failure is lost: %v %v", ok, err)
			}
		})
	}
}

// copyIndex copies the files of an index a wedged DB may still be
// deleting obsolete files from (one that vanishes was obsolete), without
// pebble's lock file.
func copyIndex(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(to, e.Name()), b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// wedgedDir is a directory for a DB the test leaves wedged: a failed write
// keeps Pebble's LOCK file open until the process exits, and Windows cannot
// delete an open file, so removing the directory afterwards is best-effort.
func wedgedDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "wedged")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// A commit that fails empties the memos: whether pebble applied any of the
// batch is not known, so nothing remembered from before it may answer.
func TestFailedCommitEmptiesTheMemos(t *testing.T) {
	dir := wedgedDir(t)
	var mu sync.Mutex
	armed := false
	fsys := faultfs.Wrap(storefs.OS, injectOn([]faultfs.OpKind{faultfs.OpFileWrite, faultfs.OpFileSync}, ".log", syscall.EIO, &armed, &mu))
	db, err := Open(dir, Options{FS: fsys, OnBackgroundError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	var id objects.ID
	commit(t, db, func(b *Batch) {
		b.PutDirCache("a", DirCache{WrittenNs: 1})
		id, _ = b.PutTree(objects.Tree{Entries: []objects.Entry{{Name: "f", Kind: objects.KindFile, Mode: 0o644, ID: testID("f")}}})
		b.PutLocator(testID("blob"), objects.Locator{Pack: 1, Length: 100, Size: 10})
	})
	if _, ok, err := db.Locator(testID("blob")); !ok || err != nil {
		t.Fatalf("Locator after commit: %v, %v", ok, err)
	}
	if _, ok := db.locators.get(testID("blob")); !ok {
		t.Fatal("a locator read is not remembered")
	}
	if _, ok := db.dirCaches.get("a"); !ok {
		t.Fatal("a committed stat cache is not remembered")
	}
	if _, ok := db.trees.get(id); !ok {
		t.Fatal("a committed tree is not remembered")
	}
	mu.Lock()
	armed = true
	mu.Unlock()
	testbound.Within(t, testbound.Hang, func() {
		b := db.NewBatch()
		defer b.Close()
		b.PutDirCache("a", DirCache{WrittenNs: 2})
		err = b.Commit()
	})
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("a commit with failing log writes: %v, want EIO", err)
	}
	if _, ok := db.dirCaches.get("a"); ok {
		t.Fatal("a stat cache is remembered across a failed commit")
	}
	if _, ok := db.trees.get(id); ok {
		t.Fatal("a tree is remembered across a failed commit")
	}
	if _, ok := db.locators.get(testID("blob")); ok {
		t.Fatal("a locator is remembered across a failed commit")
	}
}
