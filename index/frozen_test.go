package index_test

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/frozen"
	"github.com/ckpt/ckpt/internal/testtree"
	"github.com/ckpt/ckpt/objects"
)

// The index of the store frozen under testdata (written by an earlier
// version of this package, or this one) opens read-only and decodes to
// the recipe: its format version, tasks, checkpoints in order with their
// messages and times, and every checkpoint's tree entry by entry.
func TestFrozenStoreIndex(t *testing.T) {
	for _, v := range frozen.Versions {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { checkFrozenIndex(t, frozen.Copy(t, v), v) })
	}
}

func checkFrozenIndex(t *testing.T, store string, version int) {
	db, err := index.Open(filepath.Join(store, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, ok, err := db.Meta()
	if err != nil || !ok || m.FormatVersion != uint32(version) {
		t.Fatalf("meta = %+v, %v, %v; want format version %d", m, ok, err, version)
	}
	deltas := 0
	if err := db.EachTreeBase(func(_, base objects.ID) error {
		if !base.IsZero() {
			deltas++
		}
		return nil
	}); err != nil || (version >= 2) != (deltas > 0) {
		t.Fatalf("%d trees stored as deltas, %v; want some exactly from format version 2 on", deltas, err)
	}
	byTask := map[string][]frozen.Step{}
	for _, s := range frozen.Steps() {
		byTask[s.Task] = append(byTask[s.Task], s)
	}
	tasks, err := db.Tasks()
	if err != nil || len(tasks) != len(byTask) {
		t.Fatalf("tasks = %v, %v; want %d", tasks, err, len(byTask))
	}
	for _, task := range tasks {
		ids, err := db.TaskCheckpoints(task)
		steps := byTask[task]
		if err != nil || len(ids) != len(steps) {
			t.Fatalf("task %s: %d checkpoints, %v; want %d", task, len(ids), err, len(steps))
		}
		head, _, err := db.Task(task)
		if err != nil || head.Head != ids[len(ids)-1] {
			t.Errorf("task %s: head %s, %v; want its last checkpoint", task, head.Head.Short(), err)
		}
		for i, id := range ids {
			cp, err := db.Checkpoint(id)
			if err != nil {
				t.Fatal(err)
			}
			s := steps[i]
			if cp.Message != s.Message || !cp.Time.Equal(s.Time) || cp.Seq != uint64(i+1) || cp.Task != task {
				t.Errorf("checkpoint %s = %+v; want %q at %v, seq %d", id.Short(), cp, s.Message, s.Time, i+1)
			}
			got := map[string]testtree.Entry{}
			readTree(t, db, cp.Root, "", got)
			want := frozen.Expected(t, s)
			for p, e := range want {
				if e.Kind == "file" {
					e.Content = objects.Sum([]byte(e.Content)).String()
				}
				if runtime.GOOS == "windows" {
					e.Mode = got[p].Mode
				}
				want[p] = e
			}
			if d := testtree.Diff(want, got); d != "" {
				t.Errorf("tree of %q:\n%s", s.Message, d)
			}
		}
	}
}

// readTree records the entries of tree id under dir as testtree.Entry
// values whose Content is a file's blob id.
func readTree(t *testing.T, db *index.DB, id objects.ID, dir string, out map[string]testtree.Entry) {
	t.Helper()
	tree, err := db.Tree(id)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(tree.Entries, func(a, b objects.Entry) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("tree %s is not sorted", id.Short())
	}
	for _, e := range tree.Entries {
		p := path.Join(dir, e.Name)
		entry := testtree.Entry{Kind: e.Kind.String(), Mode: fs.FileMode(e.Mode) & fs.ModePerm}
		switch e.Kind {
		case objects.KindDir:
			entry.Mode |= fs.ModeDir
			readTree(t, db, e.ID, p, out)
		case objects.KindFile:
			entry.Content = e.ID.String()
		}
		out[p] = entry
	}
}
