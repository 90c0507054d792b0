package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/internal/ui"
)

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	res, err := http.DefaultClient.Do(authed(t, "GET", url))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

func postJSON(t *testing.T, srv, path string, body, v any) int {
	t.Helper()
	data, _ := json.Marshal(body)
	res, err := http.DefaultClient.Do(postRequest(t, srv+path, srv, "application/json", string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode
}

func TestCheckpointPagesCoverTheTaskOnceNewestFirst(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "0"}})
	const n = 23
	for i := 1; i <= n; i++ {
		s.save("default", "step", testtree.Dir{"a.txt": testtree.File{Content: strings.Repeat("x", i)}})
	}
	srv := serve(t, s.b)
	var seqs []uint64
	before := uint64(0)
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		var p ui.Page
		url := srv.URL + "/api/checkpoints?task=default&limit=5"
		if before != 0 {
			url += "&before=" + itoa(before)
		}
		if code := getJSON(t, url, &p); code != http.StatusOK {
			t.Fatalf("page: %d", code)
		}
		if len(p.Checkpoints) > 5 {
			t.Fatalf("page of %d, limit 5", len(p.Checkpoints))
		}
		for _, cp := range p.Checkpoints {
			seqs = append(seqs, cp.Seq)
		}
		if p.Next == 0 {
			break
		}
		before = p.Next
	}
	if len(seqs) != n {
		t.Fatalf("pages hold %d checkpoints, want %d", len(seqs), n)
	}
	for i, seq := range seqs {
		if seq != uint64(n-i) {
			t.Fatalf("position %d holds @%d, want @%d", i, seq, n-i)
		}
	}
	// A before far past the newest is the newest page, read by key: it
	// does not look every sequence number up on its way down.
	var p ui.Page
	if code := getJSON(t, srv.URL+"/api/checkpoints?task=default&limit=5&before="+itoa(1<<62), &p); code != http.StatusOK {
		t.Fatalf("page before 2^62: %d", code)
	}
	if len(p.Checkpoints) != 5 || p.Checkpoints[0].Seq != n || p.Next != n-4 {
		t.Fatalf("page before 2^62 = %d checkpoints from @%d, next %d", len(p.Checkpoints), p.Checkpoints[0].Seq, p.Next)
	}
}

func TestDiffListsChangesAndFilesShowTextBinaryAndImages(t *testing.T) {
	s := newStore(t, testtree.Dir{
		"main.go":  testtree.File{Content: "package main\n\nfunc main() {}\n"},
		"blob.bin": testtree.File{Content: "a\x00b"},
		"pic.svg":  testtree.File{Content: `<svg xmlns="http://www.w3.org/2000/svg"/>`},
	})
	from := s.save("default", "one", nil)
	to := s.save("default", "two", testtree.Dir{
		"main.go":  testtree.File{Content: "package main\n\nfunc main() { println(1) }\n"},
		"blob.bin": testtree.File{Content: "a\x00bc"},
		"new.txt":  testtree.File{Content: "hi\n"},
	})
	srv := serve(t, s.b)
	q := "task=default&from=" + from.ID.String() + "&to=" + to.ID.String()
	var d ui.DiffPage
	if code := getJSON(t, srv.URL+"/api/diff?"+q, &d); code != http.StatusOK {
		t.Fatalf("diff: %d", code)
	}
	if d.Total != 3 || d.Counts[ui.StatusModified] != 2 || d.Counts[ui.StatusAdded] != 1 {
		t.Fatalf("diff %+v", d)
	}
	var v ui.FileView
	getJSON(t, srv.URL+"/api/file?"+q+"&path=main.go", &v)
	if v.Binary || v.Before == nil || v.After == nil || !strings.Contains(*v.After, "println(1)") {
		t.Fatalf("main.go view %+v", v)
	}
	v = ui.FileView{}
	getJSON(t, srv.URL+"/api/file?"+q+"&path=blob.bin", &v)
	if !v.Binary || v.Before != nil || v.BeforeSize != 3 || v.AfterSize != 4 {
		t.Fatalf("blob.bin view %+v", v)
	}
	if code := getJSON(t, srv.URL+"/api/file?"+q+"&path=pic.svg", &v); code != http.StatusNotFound {
		t.Fatalf("unchanged file: %d, want 404", code)
	}
	// The workspace as the "to" side, and an image's raw bytes with SVG sandboxed.
	s.save("default", "three", testtree.Dir{"pic.svg": testtree.File{Content: `<svg xmlns="http://www.w3.org/2000/svg" width="2"/>`}})
	res, err := http.DefaultClient.Do(authed(t, "GET", srv.URL+"/api/raw?task=default&from="+from.ID.String()+"&to=workspace&path=pic.svg&side=after"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("raw svg: %d %v", res.StatusCode, res.Header)
	}
}

func TestAHundredThousandFileDiffIsServedInPagesFromOneBackendCall(t *testing.T) {
	files := make([]ui.FileChange, 100_000)
	for i := range files {
		files[i] = ui.FileChange{Path: "f" + itoa(uint64(i)), Status: ui.StatusAdded}
	}
	c := &countingBackend{Backend: fixedDiff(files)}
	srv := serve(t, c)
	for _, off := range []int{0, ui.MaxDiffPage, 50_000, len(files) - 10} {
		var d ui.DiffPage
		getJSON(t, srv.URL+"/api/diff?task=t&from=a&to=b&offset="+itoa(uint64(off)), &d)
		want := min(ui.MaxDiffPage, len(files)-off)
		if d.Total != len(files) || d.Counts[ui.StatusAdded] != len(files) || len(d.Files) != want || d.Files[0].Path != files[off].Path {
			t.Fatalf("page at %d: total %d, %d files, want %d", off, d.Total, len(d.Files), want)
		}
	}
	if c.count("Diff") != 1 {
		t.Fatalf("%d backend diffs for four pages of one diff, want 1", c.count("Diff"))
	}
}

// fixedDiff is a Backend whose every diff is the same list of changes; only
// Diff is called by the test using it.
type fixedDiff []ui.FileChange

func (f fixedDiff) Diff(context.Context, string, string, string) ([]ui.FileChange, error) {
	return f, nil
}
func (fixedDiff) Tasks(context.Context) ([]ui.Task, error) { return nil, nil }
func (fixedDiff) Checkpoints(context.Context, string, ui.PageQuery) (ui.Page, error) {
	return ui.Page{}, nil
}
func (fixedDiff) File(context.Context, string, string, string, string) (ui.FileContents, error) {
	return ui.FileContents{}, ui.ErrNotFound
}
func (fixedDiff) History(context.Context, string, string) ([]ui.HistoryEntry, error) {
	return nil, nil
}
func (fixedDiff) Plan(context.Context, ui.RestoreRequest) (ui.RestorePlan, error) {
	return ui.RestorePlan{}, nil
}
func (fixedDiff) Restore(context.Context, ui.RestoreRequest) (ui.RestoreResult, error) {
	return ui.RestoreResult{}, nil
}
func (fixedDiff) Subscribe(ctx context.Context) <-chan ui.Event { return nil }

func TestPlanShowsWhatRestoreDoesAndUndoRestoresTheBackup(t *testing.T) {
	s := newStore(t, testtree.Dir{"keep.txt": testtree.File{Content: "k"}, "a.txt": testtree.File{Content: "one"}})
	first := s.save("default", "one", nil)
	s.save("default", "two", testtree.Dir{"a.txt": testtree.File{Content: "two"}, "b.txt": testtree.File{Content: "new"}})
	srv := serve(t, s.b)
	req := ui.RestoreRequest{Task: "default", Ref: first.ID.String()}
	var plan ui.RestorePlan
	if code := postJSON(t, srv.URL, "/api/plan", req, &plan); code != http.StatusOK {
		t.Fatalf("plan: %d", code)
	}
	if strings.Join(plan.Write, ",") != "a.txt" || strings.Join(plan.Delete, ",") != "b.txt" || !plan.Backup {
		t.Fatalf("plan %+v", plan)
	}
	assertFile(t, s.ws, "a.txt", "two") // the plan changed nothing
	var res ui.RestoreResult
	if code := postJSON(t, srv.URL, "/api/restore", req, &res); code != http.StatusOK {
		t.Fatalf("restore: %d", code)
	}
	assertFile(t, s.ws, "a.txt", "one")
	if res.Backup == "" || strings.Join(res.Written, ",") != "a.txt" || strings.Join(res.Deleted, ",") != "b.txt" {
		t.Fatalf("restore %+v", res)
	}
	if code := postJSON(t, srv.URL, "/api/restore", ui.RestoreRequest{Task: "default", Ref: res.Backup}, &res); code != http.StatusOK {
		t.Fatalf("undo: %d", code)
	}
	assertFile(t, s.ws, "a.txt", "two")
	assertFile(t, s.ws, "b.txt", "new")
	var bad map[string]string
	if code := postJSON(t, srv.URL, "/api/plan", ui.RestoreRequest{Task: "default", Ref: "zzzz"}, &bad); code != http.StatusNotFound {
		t.Fatalf("unknown ref: %d, want 404", code)
	}
}

func TestEventsStreamASaveAsItHappens(t *testing.T) {
	s := newStore(t, testtree.Dir{"a.txt": testtree.File{Content: "a"}})
	srv := serve(t, s.b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := authed(t, "GET", srv.URL+"/api/events").WithContext(ctx)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 256)
	n, _ := res.Body.Read(buf) // ": ready" arrives once the subscription is live
	if !strings.Contains(string(buf[:n]), "ready") {
		t.Fatalf("first bytes %q", buf[:n])
	}
	saved := s.save("live", "while watching", testtree.Dir{"a.txt": testtree.File{Content: "b"}})
	var got strings.Builder
	for !strings.Contains(got.String(), "\n\n") {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream ended: %v after %q", err, got.String())
		}
		got.Write(buf[:n])
	}
	want := `event: checkpoint` + "\n" + `data: {"type":"checkpoint","task":"live","id":"` + saved.ID.String() + `"}`
	if !strings.Contains(got.String(), want) {
		t.Fatalf("stream %q, want %q", got.String(), want)
	}
}

func TestPollHeadsReportsMovedAndNewHeads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rounds := make(chan map[string]string)
	heads := func(ctx context.Context) (map[string]string, error) {
		select {
		case h := <-rounds:
			return h, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ch := ui.PollHeads(ctx, time.Millisecond, heads)
	rounds <- map[string]string{"a": "1", "b": "1"}
	rounds <- map[string]string{"a": "1", "b": "1"} // nothing moved
	rounds <- map[string]string{"a": "2", "b": "1", "c": "1"}
	got := map[string]string{}
	for len(got) < 2 {
		ev := <-ch
		got[ev.Task] = ev.ID
	}
	if got["a"] != "2" || got["c"] != "1" {
		t.Fatalf("events %v", got)
	}
	cancel()
	for range ch {
		// drain until closed: the poller ends with ctx
	}
}

// A file's path is cleaned as every command cleans one, so "src/../main.go"
// is main.go for the file view and its history, and a path that names the
// workspace or climbs out of it is a bad request.
func TestAFilesPathIsCleanedAndKeptInside(t *testing.T) {
	s := newStore(t, testtree.Dir{"main.go": testtree.File{Content: "one\n"}})
	from := s.save("default", "one", nil)
	to := s.save("default", "two", testtree.Dir{"main.go": testtree.File{Content: "two\n"}})
	srv := serve(t, s.b)
	q := "task=default&from=" + from.ID.String() + "&to=" + to.ID.String()
	var v ui.FileView
	if code := getJSON(t, srv.URL+"/api/file?"+q+"&path=src/../main.go", &v); code != http.StatusOK || v.Path != "main.go" || v.After == nil || *v.After != "two\n" {
		t.Fatalf("src/../main.go: %d %+v", code, v)
	}
	var h struct{ Entries []ui.HistoryEntry }
	if code := getJSON(t, srv.URL+"/api/history?task=default&path=./src/..//main.go", &h); code != http.StatusOK || len(h.Entries) != 2 {
		t.Fatalf("history of ./src/..//main.go: %d, %d entries, want 2", code, len(h.Entries))
	}
	for _, p := range []string{"../main.go", "/main.go", ".", "src/..", ""} {
		if code := getJSON(t, srv.URL+"/api/file?"+q+"&path="+p, &v); code != http.StatusBadRequest {
			t.Errorf("file %q: %d, want 400", p, code)
		}
		if code := getJSON(t, srv.URL+"/api/history?task=default&path="+p, &h); code != http.StatusBadRequest {
			t.Errorf("history %q: %d, want 400", p, code)
		}
	}
}
