//go:build unix

package osfs

import (
	"os"
	"os/signal"
	"syscall"
)

var terminationSignals = unixTerminationSignals()

// unixTerminationSignals are SIGINT, SIGTERM and SIGHUP (the terminal
// went away), but for those the process started with ignored: SIGHUP
// under nohup, SIGINT in a command a shell started in the background (`ckpt
// save &` in a script, which Ctrl-C at the terminal must not stop). A
// handler for such a signal would undo what its starter asked.
func unixTerminationSignals() []os.Signal {
	var sigs []os.Signal
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
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
