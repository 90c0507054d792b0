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

func privateFiles() { syscall.Umask(0o077) }
