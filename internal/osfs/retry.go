package osfs

import "time"

// sharingBackoff is the first pause before an operation that another
// process's open handle refused is tried again; each further pause
// doubles, up to sharingAttempts tries in all (about 0.6 s), long enough
// for an editor, a virus scanner or a concurrent rename that holds a file
// or directory for a moment to let go.
const (
	sharingBackoff  = 10 * time.Millisecond
	sharingAttempts = 7
)

// RetrySharing runs op, and runs it again after a pause while it fails
// with a sharing violation (IsSharingViolation: Windows only, so on unix op
// runs once). It returns op's last error.
func RetrySharing(op func() error) error {
	err := op()
	for i, d := 1, sharingBackoff; err != nil && IsSharingViolation(err) && i < sharingAttempts; i, d = i+1, 2*d {
		time.Sleep(d)
		err = op()
	}
	return err
}
