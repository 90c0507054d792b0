//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// resident is a ckpt process that stays up across the operations sent to
// it (serve --listen, serve on stdio); nil srv when none runs.
type resident struct {
	srv *exec.Cmd
}

// peakRSS is the process's peak resident set so far, in KiB (0 if unknown).
func (c resident) peakRSS() int64 {
	if c.srv == nil {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.srv.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// watches counts the inotify watches the process holds: the "inotify wd:"
// lines of its inotify descriptors' fdinfo (0 if unknown).
func (c resident) watches() int {
	if c.srv == nil {
		return 0
	}
	dir := fmt.Sprintf("/proc/%d/fd", c.srv.Process.Pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err != nil || target != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", c.srv.Process.Pid, fd.Name()))
		if err != nil {
			continue
		}
		n += bytes.Count(info, []byte("\ninotify wd:"))
	}
	return n
}
