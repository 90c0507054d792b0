package remotesync

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ckpt/ckpt/objects"
)

// A fork's name is a task name the engine takes, however long the forked
// task's name: cut at a character's start to leave room for the tip's id.
func TestForkNameStaysATaskName(t *testing.T) {
	tip := objects.ID{1, 2, 3}
	for _, task := range []string{"default", strings.Repeat("t", MaxTaskLen), strings.Repeat("é", MaxTaskLen/2), "a" + strings.Repeat("é", MaxTaskLen/2)} {
		name := ForkName(task, tip)
		base, id, ok := strings.Cut(name, "~")
		if !ok || id != tip.Short() || len(name) > MaxTaskLen || !utf8.ValidString(name) || !strings.HasPrefix(task, base) ||
			(len(task)+1+len(id) <= MaxTaskLen) != (base == task) {
			t.Errorf("ForkName(%d-byte task) = %q (%d bytes)", len(task), name, len(name))
		}
	}
}
