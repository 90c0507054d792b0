package walker

// permChecker on Windows answers yes without a system call: access is
// decided by ACLs, which only opening the file can evaluate. A directory
// that cannot be listed is still reported, by its failing open; a file
// that cannot be read fails when its contents are read.
type permChecker struct {
	// access, when set, decides instead.
	access func(dirfd dirFD, name string, mode uint32) error
}

func newPermChecker() permChecker { return permChecker{} }

// check returns nil unless the test hook says otherwise.
func (p *permChecker) check(dirfd dirFD, name string, _ *fileStat, want uint32) error {
	if p.access != nil {
		return p.access(dirfd, name, want)
	}
	return nil
}
