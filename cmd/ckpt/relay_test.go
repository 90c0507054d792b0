package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
)

// The server may send the connection events (another client's save)
// before its answer to attach: attach reads past them to the answer, a
// refusal fails it, and the events reach the host first, before what
// follows the answer.
func TestAttachReadsPastEventsToItsAnswer(t *testing.T) {
	const event = `{"jsonrpc":"2.0","method":"checkpoint","params":{"task":"other"}}` + "\n"
	for name, c := range map[string]struct {
		answer   string
		wantCode int
	}{
		"refused":  {`{"jsonrpc":"2.0","id":"ckpt-relay-attach","error":{"code":4,"message":"another workspace","data":{"exit_code":4}}}` + "\n", 4},
		"accepted": {`{"jsonrpc":"2.0","id":"ckpt-relay-attach","result":{}}` + "\n", 0},
	} {
		t.Run(name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			go func() {
				defer server.Close()
				if _, err := bufio.NewReader(server).ReadBytes('\n'); err != nil {
					return
				}
				io.WriteString(server, event+c.answer+"after\n")
			}()
			a := &app{stderr: io.Discard, lockTimeout: time.Minute, store: "S"}
			r, err := a.attach(client, protocol.AttachParams{})
			if c.wantCode != 0 {
				var exit remoteExit
				if !errors.As(err, &exit) || exit.code != c.wantCode {
					t.Fatalf("attach = %v, want the server's refusal with exit %d", err, c.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(r)
			if want := event + "after\n"; !bytes.Equal(rest, []byte(want)) {
				t.Fatalf("after attach the host gets %q, want %q", rest, want)
			}
		})
	}
}

// A multi-root command attaches with its roots alone: a first root whose
// name is not UTF-8 (the workspace a single-root command would mean) must
// not travel as workspace_base64 beside them, which the server refuses.
func TestAttachParamsOfRootsNameNoWorkspace(t *testing.T) {
	a := &app{}
	cmd := a.rootCommand() // binds the flags, to their defaults
	a.workspace, a.workspaces = "/w/one\xff", []string{"/w/one\xff", "/w/two"}
	params, err := a.attachParams(cmd)
	if err != nil || params.Workspace != "" || params.WorkspaceBase64 != nil || len(params.Roots) != 2 {
		t.Fatalf("attach params %+v, %v; want the two roots alone", params, err)
	}
}
