package ui_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

// Two names that differ only in bytes that are not UTF-8 (Linux file
// systems take any bytes; macOS and Windows refuse such names, so this
// test is Linux only) stay apart in the page's API: the diff lists both
// with their bytes beside the lossy path, a file and its history are
// fetched by path_base64, and the plan and restore of one of them, named
// by paths_base64, touch exactly that file.
func TestUINamesThatAreNotUTF8StayApart(t *testing.T) {
	ff, fe := "a\xff", "a\xfe"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	s := newStore(t, testtree.Dir{ff: testtree.File{Content: "ff one"}, fe: testtree.File{Content: "fe one"}})
	first := s.save("default", "one", nil)
	s.save("default", "two", testtree.Dir{ff: testtree.File{Content: "ff two"}, fe: testtree.File{Content: "fe two"}})
	srv := serve(t, s.b)

	var p struct{ Files []ui.FileChange }
	q := url.Values{"task": {"default"}, "from": {first.ID.String()}, "to": {ui.WorkspaceRef}}
	if code := getJSON(t, srv.URL+"/api/diff?"+q.Encode(), &p); code != http.StatusOK {
		t.Fatalf("diff: %d", code)
	}
	var got []string
	for _, f := range p.Files {
		if f.PathBase64 == nil || f.Path != "a\ufffd" {
			t.Fatalf("diff lists %+v without its bytes", f)
		}
		got = append(got, *f.PathBase64)
	}
	if slices.Sort(got); !slices.Equal(got, []string{b64(fe), b64(ff)}) {
		t.Fatalf("diff names %q, want the bytes of %q and %q", got, fe, ff)
	}

	q.Set("path_base64", b64(ff))
	var fv struct {
		ui.FileChange
		Before, After *string
	}
	if code := getJSON(t, srv.URL+"/api/file?"+q.Encode(), &fv); code != http.StatusOK || fv.Before == nil || *fv.Before != "ff one" {
		t.Fatalf("file by path_base64: %d %+v", code, fv)
	}
	var h struct{ Entries []ui.HistoryEntry }
	hq := url.Values{"task": {"default"}, "path_base64": {b64(fe)}}
	if code := getJSON(t, srv.URL+"/api/history?"+hq.Encode(), &h); code != http.StatusOK || len(h.Entries) != 2 ||
		h.Entries[0].Change.PathBase64 == nil || *h.Entries[0].Change.PathBase64 != b64(fe) {
		t.Fatalf("history by path_base64: %d %+v", code, h)
	}

	req := ui.RestoreRequest{Task: "default", Ref: first.ID.String(), Paths: []string{}, PathsBase64: []string{b64(ff)}}
	var plan ui.RestorePlan
	if code := postJSON(t, srv.URL, "/api/plan", req, &plan); code != http.StatusOK || !slices.Equal(plan.WriteBase64, []string{b64(ff)}) {
		t.Fatalf("plan of one file by paths_base64: %d %+v", code, plan)
	}
	var res ui.RestoreResult
	if code := postJSON(t, srv.URL, "/api/restore", req, &res); code != http.StatusOK || !slices.Equal(res.WrittenBase64, []string{b64(ff)}) {
		t.Fatalf("restore of one file by paths_base64: %d %+v", code, res)
	}
	assertFile(t, s.ws, ff, "ff one")
	assertFile(t, s.ws, fe, "fe two")

	var bad map[string]string
	if code := postJSON(t, srv.URL, "/api/plan", ui.RestoreRequest{Task: "default", Ref: first.ID.String(), PathsBase64: []string{"%%"}}, &bad); code != http.StatusBadRequest {
		t.Fatalf("plan with paths_base64 that is not base64: %d %v, want 400", code, bad)
	}
}
