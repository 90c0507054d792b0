package restore

import (
	"fmt"

	"github.com/ckpt/ckpt/internal/osfs"
)

// SharingViolationError is a path the restore could not replace because
// another process holds it open in a way that forbids it (Windows only: an
// open file never blocks a rename on unix). The restore reports the path as
// a conflict and leaves its current content.
type SharingViolationError struct{ Err error }

func (e *SharingViolationError) Error() string {
	return fmt.Sprintf("another program has this file open (%v)", e.Err)
}

func (e *SharingViolationError) Unwrap() error { return e.Err }

// rename moves oldname over newname, retrying briefly while another process
// holds newname open (osfs.RetrySharing); when it still does, the error is
// a *SharingViolationError.
func (x *Applier) rename(oldname, newname string) error {
	err := osfs.RetrySharing(func() error { return x.FS.Rename(oldname, newname) })
	if err != nil && osfs.IsSharingViolation(err) {
		return &SharingViolationError{Err: err}
	}
	return err
}

// SymlinkUnsupportedError is a symlink the restore could not create: the
// file system has none, or (Windows) the user may not create them. The
// restore reports the path as a conflict; it never writes the link's
// target in its place.
type SymlinkUnsupportedError struct{ Err error }

func (e *SymlinkUnsupportedError) Error() string {
	return fmt.Sprintf("symlinks cannot be created here (%v)", e.Err)
}

func (e *SymlinkUnsupportedError) Unwrap() error { return e.Err }
