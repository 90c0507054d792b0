//go:build unix

package osfs

import (
	"os"
	"os/signal"
	"syscall"
)

var terminationSignals = unixTerminationSignals()

// unixTerminationSignals are interrupt, SIGTERM and SIGHUP (the terminal
// went away), unless the process started with SIGHUP ignored (nohup): a
// handler for it would undo that.
func unixTerminationSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// userUmask is the umask privateFiles replaced; -1 before it ran.
var userUmask = -1

func privateFiles() {
	old := syscall.Umask(0o077)
	if userUmask < 0 {
		userUmask = old
	}
}

func userPerm(perm os.FileMode) (os.FileMode, bool) {
	if userUmask < 0 {
		return perm, false
	}
	return perm &^ os.FileMode(userUmask), true
}
