package index

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/objects"
)

// maxTaskLen bounds task names so that a task key stays small.
const maxTaskLen = 256

// ValidTask reports whether name can be a task name: non-empty, at most 256
// bytes and free of NUL, which terminates the task name in sequence keys.
// Any other byte, '/' included ("feature/x"), is allowed.
func ValidTask(name string) error {
	switch {
	case name == "":
		return errors.New("invalid task name: empty")
	case len(name) > maxTaskLen:
		return fmt.Errorf("invalid task name %.32q...: longer than %d bytes", name, maxTaskLen)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("invalid task name %q: contains NUL", name)
	}
	return nil
}

// validDir reports whether dir is a slash-separated relative directory path
// whose every element is a objects.ValidName; "" is the workspace root.
func validDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := objects.ValidPath(dir); err != nil {
		return fmt.Errorf("invalid directory %q: %w", dir, err)
	}
	return nil
}
