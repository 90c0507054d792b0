package protocol_test

import (
	"context"
	"testing"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine/remote"
)

// push and pull pick the default remote, report a missing one as a usage
// error, and answer in the CLI's --json shapes.
func TestHostPushAndPullMethods(t *testing.T) {
	s := newRPCSession(t)
	s.write("a.txt", []byte("one\n"))
	s.OK("save", map[string]any{}, nil)
	if m, _ := s.Call("push", map[string]any{}); m.Error == nil || m.Error.Data.ExitCode != protocol.ExitUsage {
		t.Fatalf("push without a remote: %+v", m)
	}
	if err := s.e.AddRemote(context.Background(), "backup", remote.FileURL(t.TempDir())); err != nil {
		t.Fatal(err)
	}
	var push protocol.PushJSON
	s.OK("push", map[string]any{}, &push)
	if push.Remote != "backup" || push.Checkpoints != 1 {
		t.Fatalf("push: %+v", push)
	}
	var pull protocol.PullJSON
	s.OK("pull", map[string]any{"remote": "backup"}, &pull)
	if pull.Checkpoints != 0 || pull.Moved || pull.Head != push.Head {
		t.Fatalf("pull of what was pushed: %+v", pull)
	}
}
