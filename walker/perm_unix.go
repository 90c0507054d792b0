//go:build linux || darwin

package walker

import (
	"os"

	"golang.org/x/sys/unix"
)

// permChecker decides whether the walking user may read a file or list a
// directory. Mode bits answer almost always, without a system call; only
// when they deny access is the kernel asked (faccessat with the effective
// ids), so ACLs and capabilities are honoured.
type permChecker struct {
	uid  uint32
	gids map[uint32]bool
	// access, when set, replaces both the mode-bit test and faccessat.
	access func(dirfd dirFD, name string, mode uint32) error
}

func newPermChecker() permChecker {
	p := permChecker{uid: uint32(os.Geteuid()), gids: map[uint32]bool{uint32(os.Getegid()): true}}
	if groups, err := os.Getgroups(); err == nil {
		for _, g := range groups {
			p.gids[uint32(g)] = true
		}
	}
	return p
}

// check returns nil when the entry name of dirfd, whose lstat is st, allows
// want (accessRead or accessList), and the access error otherwise.
func (p *permChecker) check(dirfd dirFD, name string, st *fileStat, want uint32) error {
	if p.access != nil {
		return p.access(dirfd, name, want)
	}
	if p.bitsAllow(st, want) {
		return nil
	}
	return unix.Faccessat(dirfd, name, want, unix.AT_EACCESS)
}

func (p *permChecker) bitsAllow(st *fileStat, want uint32) bool {
	if p.uid == 0 {
		return true
	}
	mode := st.mode
	var bits uint32
	switch {
	case st.uid == p.uid:
		bits = mode >> 6
	case p.gids[st.gid]:
		bits = mode >> 3
	default:
		bits = mode
	}
	return bits&want == want
}
