package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ckpt/ckpt/internal/lossless"
)

//go:embed assets
var assets embed.FS

// Errors a Backend wraps to choose the HTTP status of a failed call.
var (
	ErrNotFound   = errors.New("ui: not found")
	ErrBadRequest = errors.New("ui: bad request")
)

// Page sizes.
const (
	DefaultPage = 200  // checkpoints per page when the page asks for none
	MaxPage     = 1000 // the most checkpoints one request returns
	maxDiffPage = 2000 // the most changed files one request returns
)

// Handler serves the page and its API for b, guarded by token (see the
// package doc). It accepts only Host headers naming a loopback address; use
// Serve to bind a listener and accept its exact address too.
func Handler(b Backend, token string) http.Handler {
	return newHandler(b, token, loopbackHost)
}

func newHandler(b Backend, token string, hostOK func(string) bool) http.Handler {
	s := &server{b: b, diffs: newDiffCache(4)}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /api/tasks", s.tasks)
	mux.HandleFunc("GET /api/checkpoints", s.checkpoints)
	mux.HandleFunc("GET /api/diff", s.diff)
	mux.HandleFunc("GET /api/file", s.file)
	mux.HandleFunc("GET /api/raw", s.raw)
	mux.HandleFunc("GET /api/history", s.history)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("POST /api/plan", s.plan)
	mux.HandleFunc("POST /api/restore", s.restore)
	mux.HandleFunc("GET /api/plan", postOnly)
	mux.HandleFunc("GET /api/restore", postOnly)
	return newGuard(token, hostOK, mux)
}

// server holds the API handlers.
type server struct {
	b     Backend
	diffs *diffCache
}

func (s *server) tasks(w http.ResponseWriter, r *http.Request) {
	ts, err := s.b.Tasks(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, map[string]any{"tasks": nonNil(ts)})
}

func (s *server) checkpoints(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	before, err1 := uintParam(q.Get("before"))
	limit, err2 := uintParam(q.Get("limit"))
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, err)
		return
	}
	pq := PageQuery{Before: before, Limit: int(min(limit, MaxPage))}
	if pq.Limit == 0 {
		pq.Limit = DefaultPage
	}
	page, err := s.b.Checkpoints(r.Context(), q.Get("task"), pq)
	if err != nil {
		writeError(w, err)
		return
	}
	page.Checkpoints = nonNil(page.Checkpoints)
	writeJSON(w, page)
}

// history answers the checkpoints in which ?path changed in ?task.
func (s *server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := pathParam(q)
	if err == nil && p == "" {
		err = errors.Join(ErrBadRequest, errors.New("history needs a path"))
	}
	if err != nil {
		writeError(w, err)
		return
	}
	entries, err := s.b.History(r.Context(), q.Get("task"), p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, map[string]any{"entries": nonNil(entries)})
}

func (s *server) plan(w http.ResponseWriter, r *http.Request) {
	withRequest(w, r, s.b.Plan, func(p *RestorePlan) {
		p.Write, p.Delete, p.Conflicts = nonNil(p.Write), nonNil(p.Delete), nonNil(p.Conflicts)
	})
}

func (s *server) restore(w http.ResponseWriter, r *http.Request) {
	withRequest(w, r, s.b.Restore, func(res *RestoreResult) {
		s.diffs.clearWorkspace()
		res.Written, res.Deleted, res.Conflicts = nonNil(res.Written), nonNil(res.Deleted), nonNil(res.Conflicts)
	})
}

// withRequest decodes a RestoreRequest body, calls call with it and writes
// the result after done has tidied it.
func withRequest[T any](w http.ResponseWriter, r *http.Request, call func(context.Context, RestoreRequest) (T, error), done func(*T)) {
	var req RestoreRequest
	err := readJSON(w, r, &req)
	if err == nil {
		err = decodePaths(&req)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := call(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	done(&out)
	writeJSON(w, out)
}

// postOnly answers other methods on the POST-only endpoints.
func postOnly(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Allow", http.MethodPost)
	http.Error(w, "method not allowed: use POST", http.StatusMethodNotAllowed)
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.Join(ErrBadRequest, err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	// An encoding error means the client went away: no one is left to tell.
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// pathParam is the file a query names: the bytes of ?path_base64 when
// given (a name that is not valid UTF-8), else ?path.
func pathParam(q url.Values) (string, error) {
	if !q.Has("path_base64") {
		return q.Get("path"), nil
	}
	p, err := lossless.Decode("path_base64", q.Get("path_base64"))
	if err != nil {
		return "", errors.Join(ErrBadRequest, err)
	}
	return p, nil
}

// decodePaths moves the names req gives as bytes (paths_base64) into
// req.Paths, so that a Backend reads only Paths.
func decodePaths(req *RestoreRequest) error {
	more, err := lossless.DecodeList("paths_base64", req.PathsBase64)
	if err != nil {
		return errors.Join(ErrBadRequest, err)
	}
	req.Paths, req.PathsBase64 = append(req.Paths, more...), nil
	return nil
}

func uintParam(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.Join(ErrBadRequest, err)
	}
	return v, nil
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
