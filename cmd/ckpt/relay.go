package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/internal/cmdwire"
	"github.com/ckpt/ckpt/internal/jsonrpc"
	"github.com/ckpt/ckpt/internal/lossless"
)

// attachParams is what a command attaching to the store's server says:
// its workspace, --task and the capture options it gives (givenOptions).
func (a *app) attachParams(cmd *cobra.Command) (protocol.AttachParams, error) {
	ws, err := filepath.Abs(a.workspace)
	if err != nil {
		return protocol.AttachParams{}, err
	}
	params := protocol.AttachParams{Workspace: ws, WorkspaceBase64: lossless.Base64(ws), Task: a.task, CaptureOptions: a.givenOptions(cmd)}
	if roots := a.roots(); roots != nil {
		params.Workspace, params.WorkspaceBase64, params.Roots = "", nil, roots
	}
	return params, nil
}

// attachID is the id of the attach request relay sends before the host's.
const attachID = "ckpt-relay-attach"

// attach attaches to the store's server on conn with params and returns
// the reader of the server's side that follows its answer. A refused
// attach fails with the server's error and exit code (remoteExit), one the
// server never answered (it stopped as this client reached it) with
// protocol.ErrNotAttached, and one it did not answer by answerDeadline
// (stopped or stuck, it holds the store) busy (serverUnanswered), with
// conn closed.
func (a *app) attach(conn net.Conn, params protocol.AttachParams) (*bufio.Reader, error) {
	req, err := json.Marshal(struct {
		JSONRPC string                `json:"jsonrpc"`
		ID      string                `json:"id"`
		Method  string                `json:"method"`
		Params  protocol.AttachParams `json:"params"`
	}{"2.0", attachID, "attach", params})
	if err != nil {
		return nil, err
	}
	deadline := cmdwire.CloseUnanswered(conn, a.answerDeadline())
	notAttached := func(err error) error {
		if deadline.Expired() {
			return serverUnanswered{a.store, a.serverAnswerWait()}
		}
		return fmt.Errorf("%w (%v)", protocol.ErrNotAttached, err)
	}
	if _, err := conn.Write(append(req, '\n')); err != nil {
		return nil, notAttached(err)
	}
	r := bufio.NewReaderSize(conn, 64<<10) // the server's replies may be megabytes a line
	// The server may send events to the connection before its answer
	// (another client's save): they go to the host after it.
	var early bytes.Buffer
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			deadline.Answered()
			return nil, notAttached(err)
		}
		var reply struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Message string             `json:"message"`
				Data    protocol.ErrorData `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &reply); err != nil {
			deadline.Answered()
			return nil, fmt.Errorf("the server of the store answered attach with %q: %w", line, err)
		}
		var id string
		if json.Unmarshal(reply.ID, &id) != nil || id != attachID {
			early.Write(line)
			continue
		}
		if !deadline.Answered() {
			return nil, serverUnanswered{a.store, a.serverAnswerWait()}
		}
		if e := reply.Error; e != nil {
			return nil, remoteExit{a.report(max(e.Data.ExitCode, protocol.ExitError), errors.New(e.Message))}
		}
		if early.Len() == 0 {
			return r, nil
		}
		return bufio.NewReaderSize(io.MultiReader(&early, r), 64<<10), nil
	}
}

// relay serves stdio serve's JSON-RPC through the store's server on conn
// (see serveHost): it attaches with the command's workspace, --task and
// --profile (when given), then copies the host's messages to the server
// and the server's to the host until either side ends. A failed attach is
// attach's error; the host's input is not read before it succeeded.
func (a *app) relay(cmd *cobra.Command, conn net.Conn) error {
	defer conn.Close()
	params, err := a.attachParams(cmd)
	if err != nil {
		return err
	}
	r, err := a.attach(conn, params)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(cmd.Context(), func() { conn.Close() })
	defer stop()
	pending := newUnanswered()
	var hostDone atomic.Bool
	go func() {
		// When the host is done, the server still answers what it sent;
		// then the connection ends (a named pipe cannot half-close).
		pending.copyLines(conn, bufio.NewReader(a.stdin), 1)
		hostDone.Store(true)
		pending.waitAll()
		conn.Close()
	}()
	err = pending.copyLines(a.stdout, r, -1)
	pending.serverEnded()
	if cerr := cmd.Context().Err(); cerr != nil {
		return cerr
	}
	if !hostDone.Load() { // the server stopped while the host still talked to it
		return serverGone{store: a.store}
	}
	// Closed here, once the host's requests were answered: a socket or a
	// named pipe says net.ErrClosed, serveHost's in-process connection
	// io.ErrClosedPipe.
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("the server of the store: %w", err)
	}
	return nil
}

// unanswered counts the host's requests the server has not answered yet,
// by id, from the lines relay copies each way (one JSON-RPC message or
// batch per line).
type unanswered struct {
	mu   sync.Mutex
	ids  map[string]int
	zero *sync.Cond // broadcast when ids empties or the server ends
	done bool       // the server's side ended: nothing more will be answered
}

func newUnanswered() *unanswered {
	u := &unanswered{ids: map[string]int{}}
	u.zero = sync.NewCond(&u.mu)
	return u
}

// idOf is the part of a JSON-RPC message that matches replies to requests.
type idOf struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// requestIDs are the ids of the requests on a line the host sent: one
// message or a batch. A line that does not decode has none: the server
// answers it with a null id.
func requestIDs(line []byte) []string {
	var msgs []idOf
	if bytes.HasPrefix(bytes.TrimLeft(line, " \t\r\n"), []byte("[")) {
		if json.Unmarshal(line, &msgs) != nil {
			return nil
		}
	} else {
		var one idOf
		if json.Unmarshal(line, &one) != nil {
			return nil
		}
		msgs = []idOf{one}
	}
	var out []string
	for _, m := range msgs {
		if m.ID != nil && string(m.ID) != "null" && m.Method != nil {
			out = append(out, string(m.ID))
		}
	}
	return out
}

// count adds the requests of a line the host sent (delta 1) or removes
// those a line of the server answers (delta -1).
func (u *unanswered) count(line []byte, delta int) {
	var ids []string
	if delta < 0 {
		ids = jsonrpc.ReplyIDs(line)
	} else {
		ids = requestIDs(line)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range ids {
		if u.ids[id] += delta; u.ids[id] <= 0 {
			delete(u.ids, id)
		}
	}
	if len(u.ids) == 0 {
		u.zero.Broadcast()
	}
}

// copyLines copies r's lines to w, counting each with delta, until r ends
// (nil at its end) or w fails.
func (u *unanswered) copyLines(w io.Writer, r *bufio.Reader, delta int) error {
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			u.count(line, delta)
			if _, werr := w.Write(line); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// serverEnded wakes waitAll: no more answers will come.
func (u *unanswered) serverEnded() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.done = true
	u.zero.Broadcast()
}

// waitAll waits until every request was answered or the server ended.
func (u *unanswered) waitAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.ids) > 0 && !u.done {
		u.zero.Wait()
	}
}
