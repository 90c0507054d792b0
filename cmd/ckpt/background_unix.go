//go:build !windows

package main

import "syscall"

// detachedProcess puts the background process in a session of its own:
// no controlling terminal, and the terminal's signals (^C) do not reach it.
func detachedProcess() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
