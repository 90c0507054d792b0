package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/background"
	"github.com/ckpt/ckpt/internal/osfs"
)

// TestBackgroundRecompressExitsWhenTheStoreIsGone runs the hidden
// background command for a store that does not exist (removed since the
// save that started it): it exits successfully at once and creates
// nothing.
func TestBackgroundRecompressExitsWhenTheStoreIsGone(t *testing.T) {
	e := newEnv(t)
	e.ok(backgroundCommand)
	if _, err := os.Stat(e.store); !os.IsNotExist(err) {
		t.Fatalf("the background command created the store: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(e.store)); len(ents) != 0 {
		t.Fatalf("the background command left %d entries beside the store", len(ents))
	}
}

// TestBackgroundRecompressStopsForAServer runs the hidden background
// command, with an hour's --lock-timeout, while a listening server holds
// the store (and its lock): it leaves the store to the server, which
// recompresses while idle, and exits successfully instead of waiting.
func TestBackgroundRecompressStopsForAServer(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "text\n")
	e.ok("save")
	e.listenServer()
	if r := e.run("", "--lock-timeout", "1h", backgroundCommand); r.code != 0 {
		t.Fatalf("background command with a server: exit %d\n%s", r.code, r.stderr)
	}
}

// claimBackground marks e's store (made first if need be) as compressed by
// this process, as the background process does, so that no save starts
// one; it returns the release.
func claimBackground(t *testing.T, e *env) func() error {
	t.Helper()
	if err := os.MkdirAll(e.store, 0o700); err != nil {
		t.Fatal(err)
	}
	release, ok, err := background.Claim(e.store)
	if err != nil || !ok {
		t.Fatalf("claim the store: %v %v", ok, err)
	}
	return release
}

// deferredFirstSave makes a first save from the CLI that leaves its packs
// uncompressed and starts no background process (the test holds the mark).
func deferredFirstSave(t *testing.T, e *env) {
	t.Helper()
	e.background = true
	for i := range 20 {
		e.write(fmt.Sprintf("src/f%02d.go", i), strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 2000))
	}
	release := claimBackground(t, e)
	defer release()
	if res := decode[protocol.SaveJSON](t, e.ok("--json", "save")); res.BackgroundPID != 0 {
		t.Fatalf("the save started background process %d while one holds the store", res.BackgroundPID)
	}
}

// TestStatsShowsPendingRecompression: after a first save stats shows the
// packs left uncompressed and the process compressing them (the one
// holding the store's mark), or that none does; once the background
// command has run, nothing is pending.
func TestStatsShowsPendingRecompression(t *testing.T) {
	e := newEnv(t)
	deferredFirstSave(t, e)
	release := claimBackground(t, e)
	st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats"))
	if st.DeferredPacks == 0 || st.DeferredBytes == 0 || st.BackgroundPID != os.Getpid() {
		t.Fatalf("stats after a first save: %d deferred packs, %d bytes, background pid %d (want %d)",
			st.DeferredPacks, st.DeferredBytes, st.BackgroundPID, os.Getpid())
	}
	if out, want := e.ok("stats"), fmt.Sprintf("background process %d compresses them", os.Getpid()); !strings.Contains(out, want) {
		t.Fatalf("stats says nothing of the background process (want %q):\n%s", want, out)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.DeferredPacks == 0 || st.BackgroundPID != 0 {
		t.Fatalf("stats with no background process: %d deferred packs, background pid %d", st.DeferredPacks, st.BackgroundPID)
	}
	if out := e.ok("stats"); !strings.Contains(out, "no process compresses them now") {
		t.Fatalf("stats does not say that nothing compresses the pending packs:\n%s", out)
	}
	e.ok(backgroundCommand)
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.DeferredPacks != 0 || st.DeferredBytes != 0 || st.BackgroundPID != 0 {
		t.Fatalf("stats after the background command: %d deferred packs, %d bytes, background pid %d",
			st.DeferredPacks, st.DeferredBytes, st.BackgroundPID)
	}
	if out := e.ok("stats"); strings.Contains(out, "not compressed") {
		t.Fatalf("stats still shows pending work:\n%s", out)
	}
}

// TestBackgroundYieldsToAWaitingCommand: while another open of the store
// waits for it, the background's slice does not start a pack, nor does its
// run of slices, and both leave every deferred pack as it was.
func TestBackgroundYieldsToAWaitingCommand(t *testing.T) {
	e := newEnv(t)
	deferredFirstSave(t, e)
	ctx := context.Background()
	holder, err := engine.Open(ctx, e.ws, engine.Options{StoreDir: e.store, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	_, before, err := holder.Deferred()
	if err != nil || before == 0 {
		t.Fatalf("deferred packs before: %d, %v", before, err)
	}
	waiter := make(chan error, 1)
	go func() {
		w, err := engine.Open(ctx, e.ws, engine.Options{StoreDir: e.store, MustExist: true, LockTimeout: time.Hour})
		if err == nil {
			err = w.Close()
		}
		waiter <- err
	}()
	for !holder.Awaited() {
		time.Sleep(5 * time.Millisecond) // until the waiter marks itself: a condition, not a duration
	}
	if res, yielded, err := recompressYielding(ctx, holder); err != nil || !yielded || res != nil {
		t.Fatalf("slice with a command waiting: result %+v, yielded %v, %v; want none started", res, yielded, err)
	}
	if finished, _, err := recompressUntilAwaited(ctx, holder); err != nil || finished {
		t.Fatalf("slices with a command waiting: finished %v, %v; want none started", finished, err)
	}
	if _, after, err := holder.Deferred(); err != nil || after != before {
		t.Fatalf("deferred packs after yielding: %d (was %d), %v", after, before, err)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiter; err != nil {
		t.Fatalf("the waiting open: %v", err)
	}
}

// TestBackgroundRunsEverySliceInOneOpen: with no command waiting, one open
// of the store recompresses a first save larger than a slice
// (maint.DefaultSliceBytes) to the end; a command that opens the store
// with --lock-timeout 0 afterwards finds it free and nothing deferred.
func TestBackgroundRunsEverySliceInOneOpen(t *testing.T) {
	e := newEnv(t)
	e.background = true
	for i := range 24 {
		var b strings.Builder
		for line := 0; b.Len() < 1<<20; line++ {
			fmt.Fprintf(&b, "// file %d, line %d\n", i, line)
		}
		e.write(fmt.Sprintf("src/f%02d.go", i), b.String())
	}
	release := claimBackground(t, e)
	e.ok("save")
	if err := release(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bg, err := engine.Open(ctx, e.ws, engine.Options{StoreDir: e.store, MustExist: true, GivesWay: true})
	if err != nil {
		t.Fatal(err)
	}
	if finished, slices, err := recompressUntilAwaited(ctx, bg); err != nil || !finished || slices < 2 {
		t.Fatalf("slices with no command waiting: finished %v after %d, %v; want every pack done, in several", finished, slices, err)
	}
	if err := bg.Close(); err != nil {
		t.Fatal(err)
	}
	st := decode[protocol.StoreStatsJSON](t, e.ok("--lock-timeout", "0", "--json", "stats"))
	if st.DeferredPacks != 0 || st.DeferredBytes != 0 {
		t.Fatalf("stats after one open's run: %d deferred packs, %d bytes", st.DeferredPacks, st.DeferredBytes)
	}
}

// TestBackgroundStopsForAWaiterThatNeverTakesTheStore: a process that
// waits for the store and then never takes it (stopped while it waits)
// holds its mark on the waiters' file; the background process gives way
// to it at every open, and stops, successfully and with the packs still
// deferred, once it has completed no slice for --lock-timeout.
func TestBackgroundStopsForAWaiterThatNeverTakesTheStore(t *testing.T) {
	e := newEnv(t)
	deferredFirstSave(t, e)
	f, err := os.OpenFile(filepath.Join(e.store, "lock.waiting"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := osfs.TryLockShared(f); !ok || err != nil {
		t.Fatalf("mark a waiter: %v, %v", ok, err)
	}
	e.ok("--lock-timeout", "3s", backgroundCommand) // returns, rather than giving way for ever
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.DeferredPacks == 0 {
		t.Fatal("the background process compressed the packs while a waiter was marked")
	}
}
