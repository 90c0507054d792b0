package walker

import (
	"os"

	"golang.org/x/sys/unix"
)

// readNames returns the names in the directory fd, without "." and "..".
// Darwin has no getdents; the os package reads a directory through libc's
// readdir, so the listing goes through a duplicate of fd (fd itself stays
// open for the openat and fstatat calls relative to it).
func readNames(fd int) ([]string, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}
