package background

import "golang.org/x/sys/unix"

// niceLowest is the weakest CPU priority.
const niceLowest = 19

// lowerCPU sets the process's nice value (one for all its threads on macOS).
func lowerCPU() error { return unix.Setpriority(unix.PRIO_PROCESS, 0, niceLowest) }

// lowerIO marks the process as background work (setpriority(2),
// PRIO_DARWIN_BG): its disk and network I/O is throttled and its CPU
// priority lowered further, what setiopolicy_np would do for I/O alone
// but through a call the system library exports to Go without cgo.
func lowerIO() error { return unix.Setpriority(unix.PRIO_DARWIN_PROCESS, 0, unix.PRIO_DARWIN_BG) }
