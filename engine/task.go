package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxTaskLen bounds task names (the index allows more; this is the rule
// every public operation applies).
const maxTaskLen = 200

// taskName is the one rule for task names given to any operation: ""
// means DefaultTask; otherwise 1-200 bytes of valid UTF-8 without '/',
// newlines or NUL, so that a name can be shown on one line and typed back.
// An invalid name fails with ErrBadRequest, whichever operation got it.
func taskName(task string) (string, error) {
	if task == "" {
		return DefaultTask, nil
	}
	if len(task) > maxTaskLen || !utf8.ValidString(task) || strings.ContainsAny(task, "\x00\n/") {
		return "", fmt.Errorf("%w: invalid task name %q: use 1-%d characters without '/', newlines or NUL", ErrBadRequest, task, maxTaskLen)
	}
	return task, nil
}
