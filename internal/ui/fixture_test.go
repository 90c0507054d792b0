package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt/ckpt/cmd/ckpt/uiengine"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

// store is a workspace with a real engine behind the Backend under test.
type store struct {
	t   *testing.T
	ws  string
	e   *engine.Engine
	b   *uiengine.Backend
	now atomic.Int64 // the engine's clock, unix nanoseconds
}

// advance moves the store's clock forward.
func (s *store) advance(d time.Duration) { s.now.Add(int64(d)) }

func newStore(t *testing.T, tree testtree.Dir) *store {
	t.Helper()
	s := &store{t: t, ws: t.TempDir()}
	if err := testtree.Write(s.ws, tree); err != nil {
		t.Fatal(err)
	}
	h := &uiengine.EventHub{}
	s.now.Store(time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, s.now.Load()) }
	e, err := engine.Open(context.Background(), s.ws, engine.Options{StoreDir: filepath.Join(t.TempDir(), "store"), OnEvent: h.Publish, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s.e = e
	s.b = &uiengine.Backend{
		Acquire: func(context.Context, bool) (*engine.Engine, func(), error) { return e, func() {}, nil },
		Events:  h.Subscribe,
	}
	return s
}

// save writes tree's files over the workspace (leaving the others) and
// saves it in task.
func (s *store) save(task, msg string, tree testtree.Dir) *engine.SaveResult {
	s.t.Helper()
	if err := overlay(s.ws, tree); err != nil {
		s.t.Fatal(err)
	}
	res, err := s.e.Save(context.Background(), engine.SaveOptions{Task: task, Message: msg, AllowEmpty: true})
	if err != nil {
		s.t.Fatalf("save %q: %v", msg, err)
	}
	return res
}

const testToken = "test-token-0123456789abcdef"

// serve starts an httptest server for b guarded by testToken.
func serve(t *testing.T, b ui.Backend) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(ui.Handler(b, testToken))
	t.Cleanup(srv.Close)
	return srv
}

// authed returns a request carrying the token in its header.
func authed(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(ui.TokenHeader, testToken)
	return req
}

func assertFile(t *testing.T, dir, rel, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", rel, got, want)
	}
}

// countingBackend counts the calls made to a Backend and the checkpoints it
// returned, so tests assert on work done rather than wall time.
type countingBackend struct {
	ui.Backend
	mu          sync.Mutex
	calls       map[string]int
	limits      []int
	checkpoints int
}

func (c *countingBackend) add(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[name]++
}

func (c *countingBackend) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

func (c *countingBackend) Tasks(ctx context.Context) ([]ui.Task, error) {
	c.add("Tasks")
	return c.Backend.Tasks(ctx)
}

func (c *countingBackend) Checkpoints(ctx context.Context, task string, q ui.PageQuery) (ui.Page, error) {
	c.add("Checkpoints")
	p, err := c.Backend.Checkpoints(ctx, task, q)
	c.mu.Lock()
	c.limits = append(c.limits, q.Limit)
	c.checkpoints += len(p.Checkpoints)
	c.mu.Unlock()
	return p, err
}

func (c *countingBackend) Diff(ctx context.Context, task, from, to string) ([]ui.FileChange, error) {
	c.add("Diff")
	return c.Backend.Diff(ctx, task, from, to)
}

func (c *countingBackend) File(ctx context.Context, task, from, to, path string) (ui.FileContents, error) {
	c.add("File")
	return c.Backend.File(ctx, task, from, to, path)
}

func (c *countingBackend) Restore(ctx context.Context, req ui.RestoreRequest) (ui.RestoreResult, error) {
	c.add("Restore")
	return c.Backend.Restore(ctx, req)
}

// overlay writes the files of tree under dir, creating directories as
// needed and keeping what is already there.
func overlay(dir string, tree testtree.Dir) error {
	for name, n := range tree {
		p := filepath.Join(dir, name)
		switch n := n.(type) {
		case testtree.Dir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			if err := overlay(p, n); err != nil {
				return err
			}
		case testtree.File:
			if err := os.WriteFile(p, []byte(n.Content), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// itoa spells a sequence number or a count.
func itoa[N int | uint64](n N) string { return strconv.FormatUint(uint64(n), 10) }
