package engine_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/engine"
)

// hostStep fails the test with the step's name when err is not nil.
func hostStep(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// A host program that imports only engine does everything the CLI does:
// save (with state), list, show, ls, cat, diff in every mode, restore
// (files and state), tasks, drop, gc, verify, stats, and finds the store
// without opening it.
func TestHostUsesOnlyThePublicAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "store")
	write := func(name, content string) {
		hostStep(t, "write "+name, os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644))
	}
	write("a.txt", "one\n")
	e, err := engine.Open(ctx, ws, engine.Options{StoreDir: store})
	hostStep(t, "open", err)
	defer e.Close()

	first, err := e.Save(ctx, engine.SaveOptions{Task: "chat", Message: "first", State: strings.NewReader(`{"turn":1}`)})
	hostStep(t, "save", err)
	write("a.txt", "two\n")
	write("b.txt", "new\n")
	second, err := e.Save(ctx, engine.SaveOptions{Task: "chat", Message: "second"})
	hostStep(t, "save", err)
	if first.Kind != engine.KindSave || second.Parent != first.ID || second.Stats.Added != 1 || second.Stats.Modified != 1 {
		t.Fatalf("saves: %+v, %+v", first, second)
	}

	log, err := e.List(ctx, "chat")
	hostStep(t, "list", err)
	if len(log.Checkpoints) != 2 || log.Head != second.ID || !log.Checkpoints[1].Head {
		t.Fatalf("list: %+v", log)
	}
	info, err := e.Show(ctx, "chat", "@1")
	hostStep(t, "show", err)
	if info.ID != first.ID || info.Message != "first" || info.State.IsZero() || info.Root.IsZero() {
		t.Fatalf("show: %+v", info)
	}
	state, err := e.ReadState(ctx, info.State)
	hostStep(t, "state", err)
	if string(state) != `{"turn":1}` {
		t.Fatalf("state = %q", state)
	}
	entries, err := e.Ls(ctx, "chat", "HEAD", "")
	hostStep(t, "ls", err)
	if len(entries) != 2 || entries[0].Name != "a.txt" || entries[0].Kind != engine.EntryFile || entries[0].IsDir() {
		t.Fatalf("ls: %+v", entries)
	}
	rc, _, err := e.Cat(ctx, "chat", "@1", "a.txt")
	hostStep(t, "cat", err)
	content, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(content) != "one\n" {
		t.Fatalf("cat = %q, %v", content, err)
	}

	write("a.txt", "three\n")
	for _, tc := range []struct {
		mode      engine.DiffMode
		ref, want string
	}{
		{engine.ModeCheckpoint, "@1", "modified a.txt,added b.txt"},
		{engine.ModeCheckpoint, "@2", "modified a.txt"}, // the last: against the workspace
		{engine.ModeFromInit, "@2", "modified a.txt,added b.txt"},
		{engine.ModeToCurrent, "@2", "modified a.txt"},
		{engine.ModeFull, "", "modified a.txt,added b.txt"},
	} {
		res, err := e.Diff(ctx, tc.ref, "", engine.DiffOptions{Task: "chat", Mode: tc.mode})
		hostStep(t, "diff "+string(tc.mode), err)
		var got []string
		for _, c := range res.Changes {
			got = append(got, string(c.Status)+" "+c.Path)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("diff %s %s = %v, want %s", tc.mode, tc.ref, got, tc.want)
		}
	}
	var patch strings.Builder
	live, err := e.Diff(ctx, "HEAD", engine.WorkspaceRef, engine.DiffOptions{Task: "chat"})
	hostStep(t, "diff", err)
	hostStep(t, "patch", live.WritePatch(&patch, engine.DiffFormat{}))
	if !strings.Contains(patch.String(), "+three") {
		t.Fatalf("patch:\n%s", patch.String())
	}

	res, err := e.Restore(ctx, "@1", engine.RestoreOptions{Task: "chat", Only: engine.OnlyBoth})
	hostStep(t, "restore", err)
	if res.Backup.IsZero() || res.State != info.State {
		t.Fatalf("restore: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\n" {
		t.Fatalf("a.txt after restore = %q", b)
	}

	_, err = e.Save(ctx, engine.SaveOptions{Task: "scratch", AllowEmpty: true})
	hostStep(t, "save scratch", err)
	tasks, err := e.Tasks(ctx)
	hostStep(t, "tasks", err)
	if len(tasks) != 2 || tasks[0].Name != "chat" || tasks[1].Name != "scratch" {
		t.Fatalf("tasks: %+v", tasks)
	}
	dropped, err := e.Drop(ctx, "scratch")
	hostStep(t, "drop", err)
	if len(dropped.Checkpoints) != 1 {
		t.Fatalf("drop: %+v", dropped)
	}
	if _, err := e.Drop(ctx, "scratch"); !errors.Is(err, engine.ErrUnknownRef) {
		t.Fatalf("second drop: %v, want ErrUnknownRef", err)
	}
	if _, err := e.List(ctx, "a/b"); !errors.Is(err, engine.ErrBadRequest) {
		t.Fatalf("list of an invalid task: %v, want ErrBadRequest as Save gives", err)
	}
	_, err = e.GC(ctx, engine.GCOptions{Policy: &engine.RetentionPolicy{KeepLast: 1}})
	hostStep(t, "gc", err)
	rep, err := e.Verify(ctx, engine.VerifyOptions{})
	hostStep(t, "verify", err)
	st, err := e.Stats(ctx)
	hostStep(t, "stats", err)
	if !rep.OK() || st.Checkpoints == 0 || len(st.Tasks) != 1 {
		t.Fatalf("verify %+v, stats %+v", rep, st)
	}

	// A second Engine of the same store in this process is refused as busy.
	_, err = engine.Open(ctx, ws, engine.Options{StoreDir: store})
	var busy *engine.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, engine.ErrBusy) || busy.Store != store {
		t.Fatalf("second open: %v, want a *BusyError for %s", err, store)
	}
	dir, err := engine.DefaultStoreDir(ws)
	hostStep(t, "default store", err)
	if !filepath.IsAbs(dir) || !strings.Contains(dir, filepath.Join("ckpt", "workspaces")) {
		t.Fatalf("DefaultStoreDir = %s", dir)
	}
}
