//go:build unix

package engine

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// killSelf ends this process at once, as a crash would.
func killSelf() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }

// hardKill ends p at once, as a crash would.
func hardKill(p *os.Process) { p.Kill() }

// hardKilled reports whether err is the exit of a process that killSelf or
// hardKill ended.
func hardKilled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}

// fileSizeLimiter returns a function that caps the size of every file this
// process writes from then on.
func fileSizeLimiter(t *testing.T) func(max uint64) {
	return func(max uint64) {
		lim := syscall.Rlimit{Cur: max, Max: max}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
	}
}

// setHome makes dir the home directory os.UserHomeDir reports.
func setHome(t *testing.T, dir string) { t.Setenv("HOME", dir) }

// needDirPermissions: unix directories have permission bits.
func needDirPermissions(*testing.T) {}

// unsupportedSymlinkErrno is how a file system without symlinks refuses one.
const unsupportedSymlinkErrno = syscall.EOPNOTSUPP

// needAbandonedIndexFilesFreed: unix lets a test copy and remove the files
// of an index whose injected failure left them open.
func needAbandonedIndexFilesFreed(*testing.T) {}
