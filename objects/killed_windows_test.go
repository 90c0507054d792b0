package objects

import (
	"errors"
	"os/exec"
)

// killed reports whether a child's Wait error says Process.Kill ended it:
// TerminateProcess with exit code 1, as Go's Kill does on Windows.
func killed(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == 1
}
