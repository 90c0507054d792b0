package protocol

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// A save's skipped paths carry kept when the checkpoint holds their last
// version, and leave it out otherwise.
func TestSaveViewTellsKeptSkippedPaths(t *testing.T) {
	view := SaveView(&engine.SaveResult{Skipped: []engine.Skipped{
		{Path: "f", Reason: "unreadable", Err: errors.New("open f: permission denied"), Kept: true},
		{Path: "fifo", Reason: "fifo"},
	}})
	b, err := json.Marshal(view.Skipped)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"path":"f","reason":"unreadable","error":"open f: permission denied","kept":true},{"path":"fifo","reason":"fifo"}]`
	if string(b) != want {
		t.Fatalf("skipped = %s, want %s", b, want)
	}
}
