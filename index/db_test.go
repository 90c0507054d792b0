package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/objects"
)

func openTest(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func commit(t *testing.T, db *DB, fill func(b *Batch)) {
	t.Helper()
	b := db.NewBatch()
	defer b.Close()
	fill(b)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// saveContents is what one representative save writes.
type saveContents struct {
	loc  objects.Locator
	tree objects.Tree
	cp   Checkpoint
	dc   DirCache
}

func sampleSave() saveContents {
	s := saveContents{
		loc:  objects.Locator{Pack: 3, Offset: 4096, Length: 77, Flags: 1, Size: 120},
		tree: sampleTrees()["all kinds"],
		dc:   sampleDirCache(),
	}
	s.cp = sampleCheckpoints()["full"]
	return s
}

func (s saveContents) write(t *testing.T, b *Batch) (treeID, cpID objects.ID) {
	t.Helper()
	b.PutLocator(testID("blob"), s.loc)
	treeID, err := b.PutTree(s.tree)
	if err != nil {
		t.Fatal(err)
	}
	s.cp.Root = treeID
	cpID, err = b.PutCheckpoint(s.cp)
	if err != nil {
		t.Fatal(err)
	}
	b.SetTaskHead(s.cp.Task, TaskHead{Head: cpID, LastSeq: s.cp.Seq})
	b.PutDirCache("src/pkg", s.dc)
	b.SetMeta(Meta{FormatVersion: FormatVersion, Workspace: "/w", Created: time.Unix(5, 0).UTC()})
	b.SetConfig("gc.keep-last", "10")
	return treeID, cpID
}

// checkSave asserts that everything s wrote is (present) or is not (!present) visible.
func (s saveContents) check(t *testing.T, db *DB, treeID, cpID objects.ID, present bool) {
	t.Helper()
	loc, ok, err := db.Locator(testID("blob"))
	if err != nil || ok != present || (present && loc != s.loc) {
		t.Errorf("Locator = %+v, %v, %v; want present=%v", loc, ok, err, present)
	}
	tree, err := db.Tree(treeID)
	if present && (err != nil || !reflect.DeepEqual(tree, s.tree)) {
		t.Errorf("Tree = %+v, %v", tree, err)
	}
	if !present && (!errors.Is(err, ErrNotFound) || !errors.Is(err, objects.ErrCorrupt)) {
		t.Errorf("Tree before commit: %v, want ErrNotFound marked as damage", err)
	}
	cp, err := db.Checkpoint(cpID)
	want := s.cp
	want.Root = treeID
	if present && (err != nil || !checkpointsEqual(cp, want)) {
		t.Errorf("Checkpoint = %+v, %v", cp, err)
	}
	if !present && !errors.Is(err, ErrNotFound) {
		t.Errorf("Checkpoint before commit: %v, want ErrNotFound", err)
	}
	h, ok, err := db.Task(s.cp.Task)
	if err != nil || ok != present || (present && h != (TaskHead{Head: cpID, LastSeq: s.cp.Seq})) {
		t.Errorf("Task = %+v, %v, %v", h, ok, err)
	}
	at, ok, err := db.CheckpointAt(s.cp.Task, s.cp.Seq)
	if err != nil || ok != present || (present && at != cpID) {
		t.Errorf("CheckpointAt = %v, %v, %v", at, ok, err)
	}
	dc, ok, err := db.DirCache("src/pkg")
	if err != nil || ok != present || (present && !reflect.DeepEqual(dc, s.dc)) {
		t.Errorf("DirCache = %+v, %v, %v", dc, ok, err)
	}
	_, ok, err = db.Meta()
	if err != nil || ok != present {
		t.Errorf("Meta: %v, %v", ok, err)
	}
	v, ok, err := db.Config("gc.keep-last")
	if err != nil || ok != present || (present && v != "10") {
		t.Errorf("Config = %q, %v, %v", v, ok, err)
	}
}

func TestBatchAtomicityAndReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "index")
	db := openTest(t, dir)
	if fi, err := os.Stat(dir); err != nil || !privateDirMode(fi.Mode()) {
		t.Fatalf("index dir: %v, %v; want mode 0700", fi, err)
	}
	s := sampleSave()
	b := db.NewBatch()
	treeID, cpID := s.write(t, b)
	s.check(t, db, treeID, cpID, false)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	s.check(t, db, treeID, cpID, true)
	if err := b.Commit(); err == nil {
		t.Error("second Commit succeeded")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTest(t, dir)
	defer db.Close()
	s.check(t, db, treeID, cpID, true)
}

func TestBatchClosedWithoutCommitLeavesNothing(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	s := sampleSave()
	b := db.NewBatch()
	treeID, cpID := s.write(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err == nil {
		t.Fatal("Commit after Close succeeded")
	}
	s.check(t, db, treeID, cpID, false)
	if _, err := b.PutTree(objects.Tree{}); err == nil {
		t.Fatal("PutTree after Close succeeded")
	}
}

func TestBatchInvalidArgumentFailsCommit(t *testing.T) {
	cases := map[string]func(b *Batch){
		"task head with NUL": func(b *Batch) { b.SetTaskHead("a\x00b", TaskHead{}) },
		"dir with dotdot":    func(b *Batch) { b.PutDirCache("a/../b", DirCache{}) },
		"absolute dir":       func(b *Batch) { b.PutDirCache("/a", DirCache{}) },
		"unsorted dir cache": func(b *Batch) {
			b.PutDirCache("a", DirCache{Entries: []CachedFile{{Name: "b"}, {Name: "a"}}})
		},
		"empty config key": func(b *Batch) { b.SetConfig("", "x") },
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			db := openTest(t, t.TempDir())
			defer db.Close()
			b := db.NewBatch()
			defer b.Close()
			b.SetConfig("k", "v")
			bad(b)
			if err := b.Commit(); err == nil {
				t.Fatal("Commit succeeded")
			}
			if _, ok, _ := db.Config("k"); ok {
				t.Fatal("a failed Commit wrote part of the batch")
			}
		})
	}
}

func TestPutRefusesInvalidValues(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	b := db.NewBatch()
	defer b.Close()
	if _, err := b.PutTree(objects.Tree{Entries: []objects.Entry{{Name: "a/b", Kind: objects.KindFile}}}); err == nil {
		t.Error("PutTree accepted a name with '/'")
	}
	for _, c := range []Checkpoint{{Task: "", Seq: 1, Kind: KindSave}, {Task: "t", Seq: 0, Kind: KindSave}, {Task: "t", Seq: 1}} {
		if _, err := b.PutCheckpoint(c); err == nil {
			t.Errorf("PutCheckpoint(%+v) accepted", c)
		}
	}
	// A refused Put does not poison the batch.
	b.SetConfig("k", "v")
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestBatchConcurrentPuts(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	b := db.NewBatch()
	defer b.Close()
	const workers, per = 4, 200
	var wg sync.WaitGroup
	ids := make([][]objects.ID, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				name := fmt.Sprintf("w%d-%d", w, i)
				id, err := b.PutTree(objects.Tree{Entries: []objects.Entry{{Name: name, Kind: objects.KindFile, ID: testID(name)}}})
				if err != nil {
					t.Error(err)
					return
				}
				ids[w] = append(ids[w], id)
				b.PutLocator(testID(name), objects.Locator{Pack: uint32(w), Offset: int64(i)})
			}
		})
	}
	wg.Wait()
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := db.EachTree(func(objects.ID) error { n++; return nil }); err != nil || n != workers*per {
		t.Fatalf("EachTree counted %d trees, %v; want %d", n, err, workers*per)
	}
	for w := range workers {
		for i, id := range ids[w] {
			tree, err := db.Tree(id)
			if err != nil || tree.Entries[0].Name != fmt.Sprintf("w%d-%d", w, i) {
				t.Fatalf("Tree(%v) = %+v, %v", id, tree, err)
			}
		}
	}
	locs := 0
	err := db.EachLocator(func(id objects.ID, loc objects.Locator) error {
		locs++
		return nil
	})
	if err != nil || locs != workers*per {
		t.Fatalf("EachLocator counted %d, %v", locs, err)
	}
}

func TestTasksAndSequences(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	put := func(task string, seqs ...uint64) []objects.ID {
		var ids []objects.ID
		commit(t, db, func(b *Batch) {
			for _, seq := range seqs {
				id, err := b.PutCheckpoint(Checkpoint{Task: task, Seq: seq, Kind: KindSave, Time: time.Unix(int64(seq), 0)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				b.SetTaskHead(task, TaskHead{Head: id, LastSeq: seq})
			}
		})
		return ids
	}
	// Seqs straddle byte boundaries to check big-endian ordering; "a" is a
	// prefix of "ab" to check task ranges do not overlap.
	a := put("a", 1, 2, 255, 256, 1<<32)
	ab := put("ab", 1)
	put("b/c", 7)
	if got, err := db.TaskCheckpoints("a"); err != nil || !slices.Equal(got, a) {
		t.Fatalf("TaskCheckpoints(a) = %v, %v; want %v", got, err, a)
	}
	if got, err := db.TaskCheckpoints("ab"); err != nil || !slices.Equal(got, ab) {
		t.Fatalf("TaskCheckpoints(ab) = %v, %v", got, err)
	}
	if got, err := db.TaskCheckpoints("nope"); err != nil || len(got) != 0 {
		t.Fatalf("TaskCheckpoints(nope) = %v, %v", got, err)
	}
	if got, err := db.Tasks(); err != nil || !slices.Equal(got, []string{"a", "ab", "b/c"}) {
		t.Fatalf("Tasks = %v, %v", got, err)
	}
	if id, ok, err := db.CheckpointAt("a", 256); err != nil || !ok || id != a[3] {
		t.Fatalf("CheckpointAt(a, 256) = %v, %v, %v", id, ok, err)
	}
	if _, ok, err := db.CheckpointAt("a", 3); err != nil || ok {
		t.Fatalf("CheckpointAt(a, 3) = %v, %v", ok, err)
	}
	if h, ok, err := db.Task("a"); err != nil || !ok || h.LastSeq != 1<<32 || h.Head != a[4] {
		t.Fatalf("Task(a) = %+v, %v, %v", h, ok, err)
	}
	commit(t, db, func(b *Batch) {
		b.DeleteTask("a")
		b.DeleteCheckpoint(ab[0], "ab", 1)
	})
	if got, err := db.Tasks(); err != nil || !slices.Equal(got, []string{"ab", "b/c"}) {
		t.Fatalf("Tasks after DeleteTask = %v, %v", got, err)
	}
	if got, _ := db.TaskCheckpoints("a"); len(got) != 0 {
		t.Fatalf("DeleteTask left seq entries %v", got)
	}
	if _, err := db.Checkpoint(a[0]); err != nil {
		t.Fatalf("DeleteTask removed a checkpoint: %v", err)
	}
	if _, err := db.Checkpoint(ab[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("DeleteCheckpoint: Checkpoint = %v, want ErrNotFound", err)
	}
	if got, _ := db.TaskCheckpoints("ab"); len(got) != 0 {
		t.Fatalf("DeleteCheckpoint left seq entry %v", got)
	}
	n := 0
	if err := db.EachCheckpoint(func(objects.ID, Checkpoint) error { n++; return nil }); err != nil || n != len(a)+1 {
		t.Fatalf("EachCheckpoint saw %d, %v; want %d", n, err, len(a)+1)
	}
}

func TestCheckpointsWithPrefix(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	var ids []objects.ID
	commit(t, db, func(b *Batch) {
		for i := range 300 {
			id, err := b.PutCheckpoint(Checkpoint{Task: "t", Seq: uint64(i + 1), Kind: KindSave})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	})
	slices.SortFunc(ids, func(a, b objects.ID) int { return strings.Compare(a.String(), b.String()) })
	match := func(p string) []objects.ID {
		var m []objects.ID
		for _, id := range ids {
			if strings.HasPrefix(id.String(), strings.ToLower(p)) {
				m = append(m, id)
			}
		}
		return m
	}
	full := ids[17].String()
	for _, p := range []string{"", full[:1], full[:2], full[:3], full[:4], full[:5], strings.ToUpper(full[:6]), full, "f", "ff", "0"} {
		got, err := db.CheckpointsWithPrefix(p)
		if err != nil || !slices.Equal(got, match(p)) {
			t.Errorf("CheckpointsWithPrefix(%q) = %d ids, %v; want %d", p, len(got), err, len(match(p)))
		}
	}
	if got, _ := db.CheckpointsWithPrefix(full[:1]); len(got) < 2 {
		t.Errorf("a one-character prefix of 300 ids should be ambiguous, got %d", len(got))
	}
	if got, _ := db.CheckpointsWithPrefix(full); len(got) != 1 || got[0] != ids[17] {
		t.Errorf("full id: got %v", got)
	}
	for _, bad := range []string{"xyz", "0g", full + "0"} {
		if _, err := db.CheckpointsWithPrefix(bad); err == nil {
			t.Errorf("CheckpointsWithPrefix(%q) accepted", bad)
		}
	}
}

func TestDirCaches(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	dirs := []string{"", "a", "a.txt", "a/b", "z"} // bytewise: '.' < '/'
	commit(t, db, func(b *Batch) {
		for i, d := range dirs {
			b.PutDirCache(d, DirCache{WrittenNs: int64(i), Entries: []CachedFile{{Name: "f" + fmt.Sprint(i), Size: int64(i)}}})
		}
	})
	var seen []string
	err := db.AllDirCaches(func(dir string, dc DirCache) error {
		seen = append(seen, dir)
		if want := int64(slices.Index(dirs, dir)); dc.WrittenNs != want || dc.Entries[0].Size != want {
			t.Errorf("dir %q: got %+v", dir, dc)
		}
		return nil
	})
	if err != nil || !slices.Equal(seen, dirs) {
		t.Fatalf("AllDirCaches saw %q, %v; want %q", seen, err, dirs)
	}
	stop := errors.New("stop")
	if err := db.AllDirCaches(func(string, DirCache) error { return stop }); err != stop {
		t.Fatalf("AllDirCaches did not return fn's error: %v", err)
	}
	commit(t, db, func(b *Batch) { b.DeleteDirCache("a") })
	if _, ok, err := db.DirCache("a"); ok || err != nil {
		t.Fatalf("DirCache(a) after delete: %v, %v", ok, err)
	}
	if _, ok, err := db.DirCache(""); !ok || err != nil {
		t.Fatalf("root DirCache: %v, %v", ok, err)
	}
}

func TestGCDeletes(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	var treeID objects.ID
	commit(t, db, func(b *Batch) {
		var err error
		treeID, err = b.PutTree(sampleTrees()["one file"])
		if err != nil {
			t.Fatal(err)
		}
		b.PutLocator(testID("x"), objects.Locator{Pack: 1})
	})
	commit(t, db, func(b *Batch) {
		b.DeleteTree(treeID)
		b.DeleteLocator(testID("x"))
	})
	if _, err := db.Tree(treeID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Tree after DeleteTree: %v", err)
	}
	if _, ok, err := db.Locator(testID("x")); ok || err != nil {
		t.Fatalf("Locator after DeleteLocator: %v, %v", ok, err)
	}
}

func TestCorruptValues(t *testing.T) {
	db := openTest(t, t.TempDir())
	defer db.Close()
	treeID := testID("some tree")
	cases := []struct {
		key  []byte
		read func() error
	}{
		{idKey(prefixTree, treeID), func() error { _, err := db.Tree(treeID); return err }},
		{idKey(prefixCheckpoint, treeID), func() error { _, err := db.Checkpoint(treeID); return err }},
		{idKey(prefixLocator, treeID), func() error { _, _, err := db.Locator(treeID); return err }},
		{stringKey(prefixTaskHead, "t"), func() error { _, _, err := db.Task("t"); return err }},
		{taskSeqKey("t", 9), func() error { _, _, err := db.CheckpointAt("t", 9); return err }},
		{stringKey(prefixDirCache, "src"), func() error { _, _, err := db.DirCache("src"); return err }},
		{metaKey(), func() error { _, _, err := db.Meta(); return err }},
		{stringKey(prefixDirCache, "src"), func() error { return db.AllDirCaches(func(string, DirCache) error { return nil }) }},
		{idKey(prefixCheckpoint, treeID), func() error { return db.EachCheckpoint(func(objects.ID, Checkpoint) error { return nil }) }},
		{idKey(prefixLocator, treeID), func() error { return db.EachLocator(func(objects.ID, objects.Locator) error { return nil }) }},
		{taskSeqKey("t", 9), func() error { _, err := db.TaskCheckpoints("t"); return err }},
	}
	for _, c := range cases {
		if err := db.pdb.Set(c.key, []byte("\x01garbage"), nil); err != nil {
			t.Fatal(err)
		}
		err := c.read()
		if !errors.Is(err, objects.ErrCorrupt) || !strings.Contains(err.Error(), describeKey(c.key)) {
			t.Errorf("reading garbage under %s: %v; want ErrCorrupt naming the key", describeKey(c.key), err)
		}
	}
	// A well-formed tree stored under the wrong id is corrupt too.
	enc, _ := EncodeTree(objects.Tree{})
	if err := db.pdb.Set(idKey(prefixTree, treeID), enc, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Tree(treeID); !errors.Is(err, objects.ErrCorrupt) || !strings.Contains(err.Error(), "tree/"+treeID.String()) {
		t.Errorf("tree under the wrong id: %v", err)
	}
}

func TestOpenRefusesNewerFormat(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	commit(t, db, func(b *Batch) { b.SetMeta(Meta{FormatVersion: FormatVersion + 1}) })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(dir, Options{CacheSize: 1 << 20}); err == nil {
		db.Close()
		t.Fatal("Open accepted a store with a newer format")
	}
}

// FlushGrownLog leaves a small write-ahead log alone and flushes one that
// has grown past walFlushBytes to a table. The batches are small, so that
// the index does not flush them itself.
func TestFlushGrownLogFlushesOnlyAGrownLog(t *testing.T) {
	dir := t.TempDir()
	db := openTest(t, dir)
	defer db.Close()
	tables := func() int {
		t.Helper()
		n, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		return len(n)
	}
	for i := 0; db.pdb.Metrics().WAL.Size <= walFlushBytes; i++ {
		if err := putLocators(db, fmt.Sprint("batch", i, "-"), 1000); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := db.FlushGrownLog(); err != nil || tables() != 0 {
				t.Fatalf("flush of a small log: %v, %d tables; want none written", err, tables())
			}
		}
	}
	if n := tables(); n != 0 {
		t.Fatalf("%d tables before the call: the index flushed the log itself, and the test proves nothing", n)
	}
	if err := db.FlushGrownLog(); err != nil || tables() == 0 {
		t.Fatalf("flush of a grown log: %v, %d tables; want the memtable flushed", err, tables())
	}
	if size := db.pdb.Metrics().WAL.Size; size > walFlushBytes {
		t.Fatalf("the log after the flush: %d bytes", size)
	}
}
