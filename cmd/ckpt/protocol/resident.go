package protocol

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
	"github.com/ckpt/ckpt/internal/lossless"
)

// AttachParams is what a client of a resident server says about itself
// with the attach method: the workspace it means, the task of its
// requests that name none, and the capture options it needs. Empty
// fields are not checked. WorkspaceBase64 is the workspace's bytes when
// its name is not valid UTF-8 (package lossless), and then stands for it.
type AttachParams struct {
	Workspace       string        `json:"workspace,omitempty" jsonschema:"the workspace the client means; refused when the server serves another"`
	WorkspaceBase64 *string       `json:"workspace_base64,omitempty" jsonschema:"the workspace's bytes in standard base64, when its name is not valid UTF-8; it then stands for workspace"`
	Roots           []engine.Root `json:"roots,omitempty" jsonschema:"the roots of the multi-root workspace the client means (instead of workspace), each {name, dir}; a name left out is the directory's base name; refused when the server serves another set"`
	Task            string        `json:"task,omitempty" jsonschema:"the task of the connection's requests that name none"`
	CaptureOptions
}

// CaptureOptions are what a client needs saves to capture, each left zero
// when the client leaves it to the server. A server serves the requests
// of a client whose options differ under the client's: its watcher
// follows its own options, so those requests read the workspace as a
// cold command does (engine.Capture).
type CaptureOptions struct {
	Profile     string   `json:"profile,omitempty" jsonschema:"the exclusion profile the client needs (default: the server's)"`
	Exclude     []string `json:"exclude,omitempty" jsonschema:"the extra gitignore-style exclusion patterns the client needs, in order (default: the server's)"`
	MaxFileSize int64    `json:"max_file_size,omitempty" jsonschema:"the size above which the client's saves skip a file (-1: no limit; default: the server's)"`
}

// AttachResult is what the server serves. WorkspaceBase64 and StoreBase64
// are the directories' bytes when their names are not valid UTF-8
// (package lossless).
type AttachResult struct {
	Workspace       string        `json:"workspace"`
	WorkspaceBase64 *string       `json:"workspace_base64,omitempty"`
	Roots           []engine.Root `json:"roots,omitempty"` // a multi-root workspace's roots; workspace is then their identity
	Store           string        `json:"store"`
	StoreBase64     *string       `json:"store_base64,omitempty"`
	Profile         string        `json:"profile"`
	PID             int           `json:"pid"`
}

// Resident serves the JSON-RPC clients of a resident server (`serve
// --listen`), each connection with the methods, notifications, progress
// and cancellation of stdio serve plus attach, all on one engine. The
// events of a task reach every connection that is a client of the task:
// it attached with the task, or a request of it saved or restored the task
// (the session's Task counts as attached for connections that never
// attach). The store-wide events of the Session's Store reach every
// connection.
type Resident struct {
	e       *engine.Engine
	s       Session
	profile string
	check   func(AttachParams) (*engine.Capture, error)

	mu    sync.Mutex
	conns map[*residentConn]struct{}
}

// NewResident serves e's clients. s.Task is the task of a connection that
// does not attach with one; profile is the engine's exclusion profile;
// check refuses the attach params the server cannot serve (another
// workspace, an unknown profile) with an error a host can switch on (see
// MapError), and returns the capture the connection's requests are served
// under (nil: the engine's own).
func NewResident(e *engine.Engine, s Session, profile string, check func(AttachParams) (*engine.Capture, error)) *Resident {
	return &Resident{e: e, s: s, profile: profile, check: check, conns: map[*residentConn]struct{}{}}
}

// residentConn is one client connection and the tasks whose events it gets.
type residentConn struct {
	conn  *jsonrpc.Conn
	mu    sync.Mutex
	tasks map[string]bool
}

func (c *residentConn) follow(task string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tasks[task] = true
}

func (c *residentConn) follows(task string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks[task]
}

// Serve answers one client's requests read from in on out until in ends
// or ctx is cancelled (then in is abandoned: see closableInput).
func (r *Resident) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	c := &residentConn{tasks: map[string]bool{r.s.Task: true}}
	h := newHost(r.e, r.s, func(method string, params any) { r.publish(c, method, params) })
	table := h.table()
	routes := make([]jsonrpc.Route, 0, len(table)+1)
	for _, m := range table {
		routes = append(routes, m.route)
	}
	routes = append(routes, jsonrpc.Method("attach", func(_ context.Context, p AttachParams) (AttachResult, error) {
		capture, err := r.check(p)
		if err != nil {
			return AttachResult{}, err
		}
		h.capture.Store(capture)
		if p.Task != "" {
			h.attached.Store(&p.Task)
			c.follow(p.Task)
		}
		ws, store := r.e.Workspace(), r.e.StoreDir()
		return AttachResult{Workspace: ws, WorkspaceBase64: lossless.Base64(ws), Roots: r.e.Roots(), Store: store,
			StoreBase64: lossless.Base64(store), Profile: r.profile, PID: os.Getpid()}, nil
	}))
	srv, err := jsonrpc.NewServer(jsonrpc.Options{MapError: MapError}, routes...)
	if err != nil {
		return err
	}
	c.conn = srv.NewConn(closableInput(in), out)
	r.mu.Lock()
	r.conns[c] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
	}()
	defer r.s.Store.add(func(method string, params any) { _ = c.conn.Notify(method, params) })()
	return c.conn.Serve(ctx)
}

// publish sends an event of from's requests to every client of its task,
// from included (which becomes one).
func (r *Resident) publish(from *residentConn, method string, params any) {
	ev, ok := params.(taskEvent)
	if !ok {
		return // every event names its task
	}
	task := ev.taskName()
	from.follow(task)
	r.mu.Lock()
	to := make([]*residentConn, 0, len(r.conns))
	for c := range r.conns {
		if c.follows(task) {
			to = append(to, c)
		}
	}
	r.mu.Unlock()
	for _, c := range to {
		_ = c.conn.Notify(method, params) // a client that left misses it
	}
}

// taskEvent is an event, which names its task.
type taskEvent interface{ taskName() string }

func (e InitializeEvent) taskName() string { return e.Task }
func (e CheckpointEvent) taskName() string { return e.Task }
func (e RestoreEvent) taskName() string    { return e.Task }
func (e ErrorEvent) taskName() string      { return e.Task }
func (e WarningEvent) taskName() string    { return e.Task }
