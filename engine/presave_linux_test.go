package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/internal/testbound"
)

// presaveWorld is a refreshWorld whose presaver reports each presave's
// error, and whose saves report the files their scan listed.
func presaveWorld(t *testing.T, opts Options) (*refreshWorld, chan presaved, *atomic.Uint64) {
	done := make(chan presaved, 16)
	opts.hooks.presaved = func(hashed uint64, err error) { done <- presaved{hashed, err} }
	listed := &atomic.Uint64{}
	opts.hooks.afterScan = func(s *save.Snapshot) { listed.Store(s.Files.Load()) }
	return newRefreshWorld(t, opts), done, listed
}

// presaved is what a presave reports.
type presaved struct {
	hashed uint64
	err    error
}

// awaitPresave returns the report of the next presave.
func awaitPresave(t *testing.T, done chan presaved) presaved {
	t.Helper()
	select {
	case p := <-done:
		return p
	case <-time.After(testbound.Hang):
		t.Fatalf("no presave %v after the writes", testbound.Hang)
		return presaved{}
	}
}

// awaitPresaved returns the report of the next presave that ran to its
// end and read at least least bytes, passing over those that gave way to
// a write or came late for writes already saved.
func awaitPresaved(t *testing.T, done chan presaved, least uint64) presaved {
	t.Helper()
	for {
		p := awaitPresave(t, done)
		switch {
		case errors.Is(p.err, context.Canceled) || p.err == nil && p.hashed < least:
		case p.err != nil:
			t.Fatal(p.err)
		default:
			return p
		}
	}
}

// Once the files written are quiet, the presaver stores them: the save
// that follows lists and reads nothing, captures what a cold save
// captures, and counts the bytes the presave read as its own.
func TestPresaveLeavesTheSaveOnlyTheCheckpoint(t *testing.T) {
	// Once held, a presave gives way to the save that follows, as it does
	// when the save arrives before the write is quiet: on a busy machine
	// the test's save may come later than that.
	var held atomic.Bool
	opts := Options{}
	opts.hooks.beforePresave = func(run context.Context) {
		if held.Load() {
			<-run.Done()
		}
	}
	w, done, listed := presaveWorld(t, opts)
	w.save()
	w.edit("edited!")
	p := awaitPresaved(t, done, 7*uint64(len("edited!")))
	_, res := w.save() // checks the root against a cold save's
	if !res.Created || res.Stats.Modified != 5 || res.Stats.Added != 2 {
		t.Fatalf("save after the presave: created %v, %d modified, %d added; want 5 and 2", res.Created, res.Stats.Modified, res.Stats.Added)
	}
	if n := listed.Load(); n != 0 {
		t.Fatalf("the save after the presave listed %d files, want none", n)
	}
	if res.Stats.BytesHashed != p.hashed {
		t.Fatalf("save after the presave counts %d bytes hashed, want the presave's %d", res.Stats.BytesHashed, p.hashed)
	}
	// A change after the presave is the save's to read; the save counts
	// both reads.
	w.write("top/d004/f001.txt", "later")
	p = awaitPresaved(t, done, uint64(len("later")))
	held.Store(true)
	w.write("top/d004/f002.txt", "after the presave")
	_, res = w.save()
	if !res.Created || res.Stats.Modified != 2 || res.Stats.BytesHashed < p.hashed+uint64(len("after the presave")) {
		t.Fatalf("save of a change before and one after a presave: %+v; want 2 modified, both read", res.Stats)
	}
	if n := listed.Load(); n == 0 {
		t.Fatal("the save of a change after the presave listed nothing")
	}
}

// A write that arrives while a presave runs stops it and does the work
// itself; nothing is reported as an error, and nothing is lost.
func TestPresaveGivesWayToASave(t *testing.T) {
	var w *refreshWorld
	opts := Options{}
	saved := saveOnGivingWay(t, &w, "presave", &opts.hooks.beforePresave)
	w, done, _ := presaveWorld(t, opts)
	w.save()
	w.edit("edited")
	if p := awaitPresave(t, done); p.err == nil {
		t.Fatal("a presave that gave way to a save reported no error")
	}
	res := <-saved
	if res == nil || !res.Created || res.Stats.Modified != 5 || res.Stats.Added != 2 {
		t.Fatalf("the save the presave gave way to: %+v; want the 5 edits and 2 new files", res)
	}
	if _, res := w.save(); res.Created { // and its root is a cold save's
		t.Fatalf("a save after the one the presave gave way to found changes: %+v", res.Stats)
	}
}
