package background

import "golang.org/x/sys/windows"

// lowerCPU puts the process in the idle priority class: its threads run
// when no thread of a higher class wants the CPU.
func lowerCPU() error {
	return windows.SetPriorityClass(windows.CurrentProcess(), windows.IDLE_PRIORITY_CLASS)
}

// lowerIO enters background mode, which lowers the process's I/O and
// memory priority (and its CPU priority, already idle).
func lowerIO() error {
	return windows.SetPriorityClass(windows.CurrentProcess(), windows.PROCESS_MODE_BACKGROUND_BEGIN)
}
