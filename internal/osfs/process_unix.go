//go:build unix

package osfs

import (
	"os"
	"syscall"
)

var terminationSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

func privateFiles() { syscall.Umask(0o077) }
