package background

import "errors"

// LowerPriority makes the calling process yield the CPU and the disk to
// every process of normal priority, for the rest of its life and in every
// thread it has or starts:
//   - Linux: nice 19 and the idle I/O class (ioprio_set), per thread, as
//     Linux keeps both per thread;
//   - macOS: nice 19, then PRIO_DARWIN_BG (CPU, disk and network throttled);
//   - other unix: nice 19;
//   - Windows: the idle priority class, then background mode
//     (PROCESS_MODE_BACKGROUND_BEGIN: lower I/O and memory priority too).
//
// It lowers what it can and returns the errors of what it could not; the
// process runs on either way.
func LowerPriority() error {
	return errors.Join(lowerCPU(), lowerIO())
}
