package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"golang.org/x/sys/unix"
)

// waitForeignExit waits for process pid, which is not a child of the test (the
// background process is detached), to exit: pidfd_open and poll, no
// polling loop. A process gone already counts as exited.
func waitForeignExit(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EINTR) {
			t.Fatalf("poll pidfd of %d: %v", pid, err)
		}
	}
}

// checkDetachedStdio fails if process pid (when still alive) holds
// anything but the null device as its standard streams: it must not keep
// the terminal or its parent's pipes open.
func checkDetachedStdio(t *testing.T, pid int) {
	t.Helper()
	for fd := range 3 {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
		if err != nil {
			return // exited already
		}
		if target != os.DevNull {
			t.Errorf("background process %d: fd %d is %s, want %s", pid, fd, target, os.DevNull)
		}
	}
}

// TestBackgroundRecompressionAfterFirstSave runs a first save from the
// CLI (with --lock-timeout 0), which stores its blobs uncompressed and
// starts the detached background process; a second save races that process and must succeed;
// once every process a save started has exited, no pack waits for
// compression, stats says so, the store verifies and the first
// checkpoint reads back.
func TestBackgroundRecompressionAfterFirstSave(t *testing.T) {
	e := newEnv(t)
	e.background = true
	for i := range 60 {
		e.write(fmt.Sprintf("src/f%02d.go", i), strings.Repeat(fmt.Sprintf("// line of file %d\n", i), 3000))
	}
	// --lock-timeout 0 is the save's own: the process it starts still waits
	// for the save to release the store.
	first := decode[protocol.SaveJSON](t, e.ok("--lock-timeout", "0", "--json", "save"))
	if first.BackgroundPID == 0 {
		t.Fatal("the first save started no background process")
	}
	checkDetachedStdio(t, first.BackgroundPID)
	e.write("src/f00.go", "changed\n")
	second := decode[protocol.SaveJSON](t, e.ok("--json", "save")) // races the background process
	if !second.Created {
		t.Fatal("the second save created nothing")
	}
	for _, pid := range []int{first.BackgroundPID, second.BackgroundPID} {
		if pid != 0 {
			waitForeignExit(t, pid)
		}
	}
	if marks, _ := filepath.Glob(filepath.Join(e.store, "packs", "*.raw")); len(marks) != 0 {
		t.Fatalf("deferred packs left after the background process: %v", marks)
	}
	st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats"))
	if st.DeferredPacks != 0 || st.DeferredBytes != 0 || st.CompressionRatio < 2 {
		t.Fatalf("stats after recompression: %d deferred packs, %d bytes, compression %.2fx",
			st.DeferredPacks, st.DeferredBytes, st.CompressionRatio)
	}
	e.ok("verify")
	if got, want := e.ok("cat", "@1", "src/f00.go"), strings.Repeat("// line of file 0\n", 3000); got != want {
		t.Fatalf("cat @1 src/f00.go after recompression: %d bytes, want %d", len(got), len(want))
	}
}

// TestNoBackgroundKeepsFirstSaveCompressed checks the switch: with
// CKPT_NO_BACKGROUND set a first save starts no process and compresses as
// it writes, leaving nothing deferred.
func TestNoBackgroundKeepsFirstSaveCompressed(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", strings.Repeat("text\n", 10000))
	if res := decode[protocol.SaveJSON](t, e.ok("--json", "save")); res.BackgroundPID != 0 {
		t.Fatalf("save started background process %d", res.BackgroundPID)
	}
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.DeferredPacks != 0 {
		t.Fatalf("%d deferred packs with %s set", st.DeferredPacks, noBackgroundEnv)
	}
}
