package background

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Linux I/O priorities (linux/ioprio.h): the class in the top bits.
const (
	ioprioWhoProcess = 1 // IOPRIO_WHO_PROCESS: one thread, by id
	ioprioClassShift = 13
	ioprioClassIdle  = 3 // IOPRIO_CLASS_IDLE: disk time only when no one else wants it
)

// idleIOPriority is the idle class's I/O priority value.
const idleIOPriority = ioprioClassIdle << ioprioClassShift

// niceLowest is the weakest CPU priority.
const niceLowest = 19

func lowerCPU() error {
	return forEachThread(func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, niceLowest) })
}

func lowerIO() error {
	return forEachThread(func(tid int) error {
		_, _, errno := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(tid), idleIOPriority)
		if errno != 0 {
			return errno
		}
		return nil
	})
}

// forEachThread calls set for every thread of the process, listing
// /proc/self/task again until a pass finds no thread it has not set: a
// thread the Go runtime starts meanwhile inherits its priorities from the
// thread that starts it, which may not have been set yet. A thread that
// exits before set reaches it is skipped.
func forEachThread(set func(tid int) error) error {
	done := map[int]bool{}
	for {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := false
		for _, ent := range ents {
			tid, err := strconv.Atoi(ent.Name())
			if err != nil || done[tid] {
				continue
			}
			fresh, done[tid] = true, true
			if err := set(tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
		}
		if !fresh {
			return nil
		}
	}
}
