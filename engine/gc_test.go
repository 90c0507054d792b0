package engine

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testtree"
)

// historySaves sizes the generated history of the retention test.
const historySaves = 240

// TestGCRetentionGeneratedHistory runs keep-last and max-age over a
// generated history of three tasks with overlapping content, then checks
// which checkpoints remain (computed from the fixture, not from the
// engine), that the packs shrink to exactly the records the survivors
// reference, that every survivor restores byte-exact, and that a save
// after the collection verifies.
func TestGCRetentionGeneratedHistory(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 1, 60)
	tasks := []string{"a", "a", "a", "a", "a", "b", "b", "b", "c", "c"} // unequal shares
	for range historySaves {
		h.step(tasks[h.rng.IntN(len(tasks))])
	}
	policy := RetentionPolicy{KeepLast: 20, MaxAge: 45 * time.Minute}
	gcNow := h.now()

	var want, dropped []record
	for _, task := range []string{"a", "b", "c"} {
		var own []record
		for _, r := range h.records {
			if r.task == task {
				own = append(own, r)
			}
		}
		for i, r := range own {
			head := i == len(own)-1
			if head || (i >= len(own)-policy.KeepLast && !r.time.Before(gcNow.Add(-policy.MaxAge))) {
				want = append(want, r)
			} else {
				dropped = append(dropped, r)
			}
		}
	}
	if len(dropped) < historySaves/2 {
		t.Fatalf("fixture drops only %d of %d checkpoints", len(dropped), historySaves)
	}

	res, err := h.f.e.GC(context.Background(), GCOptions{Policy: &policy, RewriteBelow: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Dropped) != len(dropped) || res.CheckpointsDeleted != len(dropped) {
		t.Fatalf("dropped %d checkpoints, want %d", len(res.Dropped), len(dropped))
	}
	for _, task := range []string{"a", "b", "c"} {
		log, err := h.f.e.List(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		var got, exp []uint64
		for _, c := range log.Checkpoints {
			got = append(got, c.Seq)
		}
		for _, r := range want {
			if r.task == task {
				exp = append(exp, r.seq)
			}
		}
		if !slices.Equal(got, exp) {
			t.Fatalf("task %s keeps seqs %v, want %v", task, got, exp)
		}
	}
	sizes := packFiles(t, h.f.store)
	wantBytes := recordBytes(t, h.f.e, want) + packHeaderBytes*int64(len(sizes))
	if got := sum(sizes); got != wantBytes || res.PackBytesAfter != got {
		t.Fatalf("packs hold %d bytes (result says %d), want %d", got, res.PackBytesAfter, wantBytes)
	}
	if res.Reclaimed() <= 0 {
		t.Fatalf("reclaimed %d bytes", res.Reclaimed())
	}
	mustVerify(t, h.f.e)
	checkContents(t, h.f.e, want)

	for _, r := range want[len(want)-8:] {
		h.f.restore(r.id.String(), RestoreOptions{Task: r.task, NoBackup: true})
		if got := onlyFiles(h.f.read()); !maps.Equal(got, r.files) {
			t.Fatalf("restore of %s: files %v, want %v", r.id.Short(), sortedKeys(got), sortedKeys(r.files))
		}
	}
	h.files = maps.Clone(want[len(want)-1].files)
	h.f.write("d0/new", "after gc")
	h.files["d0/new"] = "after gc"
	h.step("a")
	mustVerify(t, h.f.e)
	checkContents(t, h.f.e, h.records[len(h.records)-1:])
}

// onlyFiles maps the regular files of a workspace read to their contents.
func onlyFiles(ws map[string]testtree.Entry) map[string]string {
	out := map[string]string{}
	for rel, e := range ws {
		if e.Kind == "file" {
			out[rel] = e.Content
		}
	}
	return out
}

// TestGCMiddleOfChain drops checkpoints in the middle of a chain and checks
// that the remaining ones keep their ids, @N and dangling parents, and that
// HEAD~N reaching a dropped checkpoint fails without claiming corruption.
func TestGCMiddleOfChain(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 2, 10)
	for range 6 {
		h.step("default")
	}
	if _, err := h.f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{KeepLast: 2}}); err != nil {
		t.Fatal(err)
	}
	log, err := h.f.e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(log.Checkpoints) != 2 || log.Checkpoints[0].ID != h.records[4].id || log.Checkpoints[1].ID != h.records[5].id {
		t.Fatalf("remaining = %+v", log.Checkpoints)
	}
	if log.Checkpoints[0].Parent != h.records[3].id {
		t.Fatal("a remaining checkpoint's parent was rewritten")
	}
	for _, r := range h.records[4:] {
		if id, err := h.f.e.Resolve(context.Background(), "", "@"+strconv.FormatUint(r.seq, 10)); err != nil || id != r.id {
			t.Fatalf("@%d = %v, %v", r.seq, id, err)
		}
	}
	if id, err := h.f.e.Resolve(context.Background(), "", "HEAD~1"); err != nil || id != h.records[4].id {
		t.Fatalf("HEAD~1 = %v, %v", id, err)
	}
	if _, err := h.f.e.Resolve(context.Background(), "", "HEAD~2"); !errors.Is(err, ErrUnknownRef) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("HEAD~2 names a dropped checkpoint: %v, want ErrUnknownRef", err)
	}
	for _, ref := range []string{"HEAD~3", "@1", h.records[0].id.String()} {
		if _, err := h.f.e.Show(context.Background(), "", ref); !errors.Is(err, ErrUnknownRef) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s after gc: %v, want ErrUnknownRef", ref, err)
		}
	}
	mustVerify(t, h.f.e)
}

// TestGCMaxSizeDropsOldestFirst fills a store with checkpoints that each
// add a distinct file, and checks that max-size drops the oldest ones of
// any task first, never a head, until what remains fits.
func TestGCMaxSizeDropsOldestFirst(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 3, 0)
	var recs []record
	for i := range 12 {
		task := []string{"x", "y"}[i%2]
		c := make([]byte, 2000)
		for j := range c {
			c[j] = byte(h.rng.Uint32())
		}
		rel := filepath.Join("d", strconv.Itoa(i))
		h.f.write(rel, string(c))
		h.files[rel] = string(c)
		recs = append(recs, h.step(task))
		// the next checkpoint no longer holds this file: each is unique to one
		os.Remove(filepath.Join(h.f.ws, rel))
		delete(h.files, rel)
	}
	perCheckpoint := int64(53 + 2000) // a record header and a 2000-byte payload
	limit := 5*perCheckpoint + perCheckpoint/2
	res, err := h.f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{MaxSize: limit}, RewriteBelow: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, d := range res.Dropped {
		if d.Reason != "max-size" {
			t.Fatalf("dropped for %q", d.Reason)
		}
		got = append(got, uint64(slices.IndexFunc(recs, func(r record) bool { return r.id == d.ID })))
	}
	if want := []uint64{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("dropped checkpoints %v, want the oldest %v", got, want)
	}
	if after := sum(packFiles(t, h.f.store)); after > limit+packHeaderBytes {
		t.Fatalf("packs hold %d bytes, above the cap %d", after, limit)
	}

	// A cap below the heads' size drops everything but the heads.
	res, err = h.f.e.GC(context.Background(), GCOptions{Policy: &RetentionPolicy{MaxSize: 1}})
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := h.f.e.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tasks {
		if ti.Checkpoints != 1 || ti.Head != recs[len(recs)-2+slices.Index([]string{"x", "y"}, ti.Name)].id {
			t.Fatalf("task %s after a tiny cap: %+v", ti.Name, ti)
		}
	}
	mustVerify(t, h.f.e)
}

// TestGCKeepsDirCacheHonest drops the task whose checkpoints alone held
// the workspace's current contents; the stat cache still vouches for
// them, so GC must invalidate it or the next save would reference blobs
// it swept.
func TestGCKeepsDirCacheHonest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testtree.Dir{"src": testtree.Dir{"a.go": testtree.File{Content: "package a // only in task t1"}}})
	ageTree(t, f.ws)
	if _, err := f.e.Save(context.Background(), SaveOptions{Task: "t1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Drop(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	res, err := f.e.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.DirCachesDropped == 0 || res.BlobsDeleted == 0 {
		t.Fatalf("gc = %+v, want swept blobs and dropped stat caches", res)
	}
	saved := f.save("after gc")
	mustVerify(t, f.e)
	rc, _, err := f.e.Cat(context.Background(), "", saved.ID.String(), "src/a.go")
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
}

// TestAutoGCOnSave sets a remembered policy with a cap and checks that
// saves collect by themselves once the store exceeds it.
func TestAutoGCOnSave(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 4, 40)
	policy := RetentionPolicy{KeepLast: 3, MaxSize: 4 << 10}
	if err := h.f.e.SetRetention(context.Background(), policy); err != nil {
		t.Fatal(err)
	}
	if got, err := h.f.e.Retention(context.Background()); err != nil || got != policy {
		t.Fatalf("Retention() = %+v, %v", got, err)
	}
	h.f.open(Options{Now: h.now}) // the policy is remembered across opens
	for range 30 {
		h.step("default")
	}
	log, err := h.f.e.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log.Checkpoints); n > 10 {
		t.Fatalf("%d checkpoints after 30 saves under keep-last 3 with a cap", n)
	}
	mustVerify(t, h.f.e)
	if err := h.f.e.SetRetention(context.Background(), RetentionPolicy{KeepLast: -1}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("negative policy: %v", err)
	}
}

// TestDropTask drops one of two tasks sharing content and checks the
// other is untouched, the exclusive bytes are what GC then reclaims, and
// an unknown task is an unknown ref.
func TestDropTask(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 5, 12)
	for i := range 20 {
		h.step([]string{"keep", "gone"}[i%2])
	}
	var keep, gone []record
	for _, r := range h.records {
		if r.task == "keep" {
			keep = append(keep, r)
		} else {
			gone = append(gone, r)
		}
	}
	exclusive := recordBytes(t, h.f.e, append(slices.Clone(keep), gone...)) - recordBytes(t, h.f.e, keep)
	tasks, err := h.f.e.Tasks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tasks[0].Name != "gone" || tasks[0].ExclusiveBytes != exclusive {
		t.Fatalf("tasks = %+v, want gone with %d exclusive bytes", tasks, exclusive)
	}
	res, err := h.f.e.Drop(context.Background(), "gone")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) != len(gone) || res.ExclusiveBytes != exclusive || res.Head != gone[len(gone)-1].id {
		t.Fatalf("drop = %+v", res)
	}
	if _, err := h.f.e.Drop(context.Background(), "gone"); !errors.Is(err, ErrUnknownRef) {
		t.Fatalf("second drop: %v", err)
	}
	if _, err := h.f.e.Resolve(context.Background(), "gone", "HEAD"); !errors.Is(err, ErrUnknownRef) {
		t.Fatalf("HEAD of a dropped task: %v", err)
	}
	before := sum(packFiles(t, h.f.store))
	gc, err := h.f.e.GC(context.Background(), GCOptions{RewriteBelow: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Records only the dropped task held go whole; groups it shared with
	// task keep lose its members too, when gc regroups them.
	if gc.Reclaimed() < exclusive || before-sum(packFiles(t, h.f.store)) != gc.Reclaimed() {
		t.Fatalf("gc reclaimed %d bytes (packs shrank by %d), want at least the %d only the dropped task held",
			gc.Reclaimed(), before-sum(packFiles(t, h.f.store)), exclusive)
	}
	mustVerify(t, h.f.e)
	checkContents(t, h.f.e, keep)
}

// TestGCReclaimsTornTail appends garbage after the last record, as a save
// killed mid-write leaves it, and checks GC cuts it off.
func TestGCReclaimsTornTail(t *testing.T) {
	t.Parallel()
	h := newHistory(t, 6, 5)
	h.step("default")
	packs, _ := filepath.Glob(filepath.Join(h.f.store, "packs", "*.pack"))
	fi, _ := os.Stat(packs[0])
	fh, err := os.OpenFile(packs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte("CKRB torn record header"))
	fh.Close()
	res, err := h.f.e.GC(context.Background(), GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(packs[0]); res.PacksTruncated != 1 || after.Size() != fi.Size() {
		t.Fatalf("gc = %+v, pack %d bytes, want %d", res, after.Size(), fi.Size())
	}
	h.step("default")
	mustVerify(t, h.f.e)
}
