package ui

import (
	"bytes"
	"errors"
	"net/http"
	"path"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxText is the largest side shown as text; larger files are summarised.
const maxText = 1 << 20

// diffPage is one page of a diff's changed files.
type diffPage struct {
	Total  int            `json:"total"`
	Offset int            `json:"offset"`
	Counts map[string]int `json:"counts"` // files per status, over the whole diff
	Files  []FileChange   `json:"files"`
}

func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err1 := uintParam(q.Get("offset"))
	limit, err2 := uintParam(q.Get("limit"))
	if err := errors.Join(err1, err2); err != nil {
		writeError(w, err)
		return
	}
	if limit == 0 || limit > maxDiffPage {
		limit = maxDiffPage
	}
	files, err := s.changes(r, q.Get("task"), q.Get("from"), q.Get("to"), offset == 0)
	if err != nil {
		writeError(w, err)
		return
	}
	p := diffPage{Total: len(files), Offset: int(min(offset, uint64(len(files)))), Counts: map[string]int{}}
	for _, f := range files {
		p.Counts[f.Status]++
	}
	p.Files = nonNil(files[p.Offset:min(p.Offset+int(limit), len(files))])
	writeJSON(w, p)
}

// changes returns the diff from the cache or the backend. A first page
// (fresh) of a workspace diff always asks the backend: the workspace moves.
func (s *server) changes(r *http.Request, task, from, to string, fresh bool) ([]FileChange, error) {
	if from == "" || to == "" {
		return nil, errors.Join(ErrBadRequest, errors.New("from and to are required"))
	}
	key := diffKey{task, from, to}
	if !(fresh && to == WorkspaceRef) {
		if files, ok := s.diffs.get(key); ok {
			return files, nil
		}
	}
	files, err := s.b.Diff(r.Context(), task, from, to)
	if err != nil {
		return nil, err
	}
	s.diffs.put(key, files)
	return files, nil
}

// fileView is one file of a diff as the page shows it.
type fileView struct {
	FileChange
	Binary   bool    `json:"binary"`
	TooLarge bool    `json:"too_large"`
	Image    bool    `json:"image"`
	Before   *string `json:"before"`
	After    *string `json:"after"`
}

// loadFile asks the backend for the file the query names.
func (s *server) loadFile(r *http.Request) (FileContents, error) {
	q := r.URL.Query()
	p, err := pathParam(q)
	if err != nil {
		return FileContents{}, err
	}
	return s.b.File(r.Context(), q.Get("task"), q.Get("from"), q.Get("to"), p)
}

func (s *server) file(w http.ResponseWriter, r *http.Request) {
	fc, err := s.loadFile(r)
	if err != nil {
		writeError(w, err)
		return
	}
	v := fileView{FileChange: fc.FileChange, Image: imageType(fc.Path) != ""}
	v.Binary = isBinary(fc.Before) || isBinary(fc.After)
	v.TooLarge = len(fc.Before) > maxText || len(fc.After) > maxText
	if !v.Binary && !v.TooLarge {
		v.Before, v.After = text(fc.Before), text(fc.After)
	}
	writeJSON(w, v)
}

// raw serves one side's bytes. Only images get their own content type (and
// SVG a sandbox so its scripts never run); everything else is a download.
func (s *server) raw(w http.ResponseWriter, r *http.Request) {
	fc, err := s.loadFile(r)
	if err != nil {
		writeError(w, err)
		return
	}
	data := fc.After
	if r.URL.Query().Get("side") == "before" {
		data = fc.Before
	}
	if data == nil {
		writeError(w, errors.Join(ErrNotFound, errors.New("that side of the file does not exist")))
		return
	}
	ct := imageType(fc.Path)
	if ct == "" {
		ct = "application/octet-stream"
		w.Header().Set("Content-Disposition", "attachment")
	}
	if ct == "image/svg+xml" {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(data)
}

func imageType(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	case ".svg":
		return "image/svg+xml"
	}
	return ""
}

// isBinary decides as git does: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// text returns b as a string for JSON (nil stays nil); invalid UTF-8 is
// replaced so the page shows what it can.
func text(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return &s
}

type diffKey struct{ task, from, to string }

// diffCache keeps the last few diffs so paging through a long one asks the
// backend once.
type diffCache struct {
	mu struct {
		sync.Mutex
		keys  []diffKey
		files map[diffKey][]FileChange
	}
	size int
}

func newDiffCache(size int) *diffCache {
	c := &diffCache{size: size}
	c.mu.files = map[diffKey][]FileChange{}
	return c
}

func (c *diffCache) get(k diffKey) ([]FileChange, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.mu.files[k]
	return f, ok
}

func (c *diffCache) put(k diffKey, files []FileChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.files[k]; !ok {
		c.mu.keys = append(c.mu.keys, k)
	}
	c.mu.files[k] = files
	for len(c.mu.keys) > c.size {
		delete(c.mu.files, c.mu.keys[0])
		c.mu.keys = c.mu.keys[1:]
	}
}

// clearWorkspace forgets diffs against the workspace, which a restore changed.
func (c *diffCache) clearWorkspace() {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := c.mu.keys[:0]
	for _, k := range c.mu.keys {
		if k.to == WorkspaceRef {
			delete(c.mu.files, k)
			continue
		}
		keys = append(keys, k)
	}
	c.mu.keys = keys
}
