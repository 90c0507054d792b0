package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/background"
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

// threadPriorities returns the nice value and the I/O priority
// (ioprio_get) of every thread of process pid.
func threadPriorities(t *testing.T, pid int) map[int][2]int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][2]int{}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if err != nil {
			continue // the thread exited
		}
		// Fields after the command's closing parenthesis start at the
		// state (field 3); nice is field 19.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		nice, err := strconv.Atoi(fields[19-3])
		if err != nil {
			t.Fatalf("thread %d stat: %v", tid, err)
		}
		io, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, 1 /* IOPRIO_WHO_PROCESS */, uintptr(tid), 0)
		if errno != 0 {
			t.Fatalf("ioprio_get %d: %v", tid, errno)
		}
		out[tid] = [2]int{nice, int(io)}
	}
	return out
}

// TestBackgroundProcessRunsAtLowestPriority starts the background command
// while the test holds the store: by the time it has marked the store as
// its own, every thread of it runs at nice 19 in the idle I/O class; once
// the store is free it compresses everything and exits.
func TestBackgroundProcessRunsAtLowestPriority(t *testing.T) {
	e := newEnv(t)
	deferredFirstSave(t, e)
	held, err := engine.Open(context.Background(), e.ws, engine.Options{StoreDir: e.store, MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ckptBin, append(e.flags(), "--lock-timeout", "1h", backgroundCommand)...)
	cmd.Env = append(os.Environ(), "HOME="+e.home)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for {
		if pid, err := background.Running(e.store); err != nil || pid == cmd.Process.Pid {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the background command exited before it marked the store: %v", err)
		case <-time.After(5 * time.Millisecond): // poll the mark: the condition waited on
		}
	}
	const idleClass = 3 << 13 // IOPRIO_CLASS_IDLE
	for tid, prio := range threadPriorities(t, cmd.Process.Pid) {
		if prio[0] != 19 || prio[1] != idleClass {
			t.Errorf("thread %d: nice %d, ioprio %#x; want 19 and %#x", tid, prio[0], prio[1], idleClass)
		}
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatalf("background command: %v", err)
	}
	if st := decode[protocol.StoreStatsJSON](t, e.ok("--json", "stats")); st.DeferredPacks != 0 || st.BackgroundPID != 0 {
		t.Fatalf("stats after the background command: %d deferred packs, background pid %d", st.DeferredPacks, st.BackgroundPID)
	}
}
