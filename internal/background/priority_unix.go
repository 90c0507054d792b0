//go:build unix && !linux && !darwin

package background

import "golang.org/x/sys/unix"

// niceLowest is the weakest CPU priority.
const niceLowest = 19

func lowerCPU() error { return unix.Setpriority(unix.PRIO_PROCESS, 0, niceLowest) }

// lowerIO does nothing: these systems have no I/O priority a process can
// set portably; the lower CPU priority slows its I/O requests too.
func lowerIO() error { return nil }
