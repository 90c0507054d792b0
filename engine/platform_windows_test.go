package engine

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/windows"
)

// killedExit is the exit code of a process killSelf or hardKill ended; a
// failing test binary exits 1, so the two cannot be confused.
const killedExit = 137

func mkfifo(t *testing.T, _ string) {
	t.Skip("Windows has no FIFOs in the file system: a workspace cannot hold one")
}

func killSelf() { windows.TerminateProcess(windows.CurrentProcess(), killedExit) }

func hardKill(p *os.Process) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		p.Kill()
		return
	}
	defer windows.CloseHandle(h)
	windows.TerminateProcess(h, killedExit)
}

func hardKilled(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == killedExit
}

func fileSizeLimiter(t *testing.T) func(max uint64) {
	t.Skip("Windows has no per-process file-size limit (RLIMIT_FSIZE)")
	return nil
}

func setHome(t *testing.T, dir string) { t.Setenv("USERPROFILE", dir) }

func needDirPermissions(t *testing.T) {
	t.Skip("Windows directories have no permission bits: chmod cannot make one unwritable")
}

const unsupportedSymlinkErrno = windows.ERROR_PRIVILEGE_NOT_HELD

func needAbandonedIndexFilesFreed(t *testing.T) {
	t.Skip("an index abandoned after an injected failure keeps its files open until the process exits, and Windows can neither copy nor remove them meanwhile")
}
