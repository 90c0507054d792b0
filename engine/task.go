package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
)

// maxTaskLen bounds task names (the index allows more; this is the rule
// every public operation applies, and the one a fork's name is cut to).
const maxTaskLen = remotesync.MaxTaskLen

// taskName is the one rule for task names given to any operation: ""
// means DefaultTask; otherwise 1-200 bytes of valid UTF-8 without '/',
// newlines or NUL, not all blank, so that a name can be shown on one line
// and typed back. An invalid name fails with ErrBadRequest, whichever
// operation got it; the error quotes at most the name's first 40 bytes.
func taskName(task string) (string, error) {
	if task == "" {
		return DefaultTask, nil
	}
	if len(task) > maxTaskLen || !utf8.ValidString(task) || strings.ContainsAny(task, "\x00\n/") || strings.TrimSpace(task) == "" {
		shown := fmt.Sprintf("%q", task)
		if len(task) > 40 {
			shown = fmt.Sprintf("%q… (%d bytes)", strings.ToValidUTF8(task[:40], ""), len(task))
		}
		return "", fmt.Errorf("%w: invalid task name %s: use 1-%d bytes of UTF-8 without '/', newlines or NUL, not all blank", ErrBadRequest, shown, maxTaskLen)
	}
	return task, nil
}
