package main

import "syscall"

// Creation flags of the background process (winbase.h).
const (
	detachedProcessFlag       = 0x00000008 // DETACHED_PROCESS: no console
	createNewProcessGroupFlag = 0x00000200 // CREATE_NEW_PROCESS_GROUP: the console's ^C does not reach it
)

// detachedProcess starts the background process without a console, in a
// process group of its own.
func detachedProcess() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: detachedProcessFlag | createNewProcessGroupFlag, HideWindow: true}
}
