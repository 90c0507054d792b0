package osfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func dataSync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

func syncFilesystem(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}

const hasFilesystemSync = true

func dirtyBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	return meminfoDirty(string(b))
}

// meminfoDirty sums the Dirty and Writeback lines of a /proc/meminfo text
// (in kB); ok is false unless it holds both, well formed.
func meminfoDirty(meminfo string) (n int64, ok bool) {
	found := 0
	for line := range strings.Lines(meminfo) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != "Dirty" && name != "Writeback" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, false
		}
		n += kb << 10
		found++
	}
	return n, found == 2
}
