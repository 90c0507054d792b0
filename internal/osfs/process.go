package osfs

import (
	"errors"
	"os"
	"path/filepath"
)

// TerminationSignals are the signals that ask a ckpt process to stop:
// SIGINT, SIGTERM and SIGHUP on unix, but for those ignored at start (as
// nohup ignores SIGHUP, and a shell SIGINT in a background job), and
// interrupt (Ctrl-C, Ctrl-Break) on Windows.
var TerminationSignals = terminationSignals

// PrivateFiles makes the files and directories this process creates from
// now on private to its user (umask 077 on unix). On Windows, where new
// files inherit the parent directory's ACL, it does nothing; the store's
// location under the user's profile keeps it private.
func PrivateFiles() { privateFiles() }

// UserPerm is perm as the user's own umask, the one PrivateFiles replaced,
// would leave it, for what a process that made its files private writes
// for the user to use (an export); ok is false when PrivateFiles did not
// run or changed nothing (Windows), and the process's umask is the user's.
func UserPerm(perm os.FileMode) (_ os.FileMode, ok bool) { return userPerm(perm) }

// MkdirAllUser makes dir and the parents it lacks (0777 less the umask),
// then gives those it made the mode the user's own umask gives
// (UserPerm), when the process replaced it: for directories made for the
// user to use (an export's, a clone's workspace).
func MkdirAllUser(dir string) error {
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	perm, ok := UserPerm(0o777)
	if !ok {
		return nil
	}
	for _, d := range made {
		if err := os.Chmod(d, perm); err != nil {
			return err
		}
	}
	return nil
}
