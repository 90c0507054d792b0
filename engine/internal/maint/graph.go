package maint

import (
	"context"
	"errors"
	"path"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Problem is one integrity failure: what is wrong, and where it was first
// seen (the checkpoint and workspace path that reference the object).
// Message may carry the internal packages' error prefixes; the caller
// renders it for its readers.
type Problem struct {
	Checkpoint objects.ID // zero for store-level problems (a locator, a task)
	Task       string
	Seq        uint64
	Path       string     // workspace-relative path; "" for the root tree or the store
	Object     objects.ID // the tree, blob, chunk or checkpoint at fault
	Kind       string     // "checkpoint", "tree", "blob", "chunk", "state", "locator" or "task"
	Message    string
}

// refSite is where an object was first reached from.
type refSite struct {
	cp   *cpNode
	path string
}

// at fills p's checkpoint fields from the site.
func (s refSite) at(p Problem) Problem {
	if s.cp != nil {
		p.Checkpoint, p.Task, p.Seq = s.cp.id, s.cp.cp.Task, s.cp.cp.Seq
	}
	return p
}

// cpNode is one checkpoint of the graph.
type cpNode struct {
	id       objects.ID
	cp       index.Checkpoint
	head     bool
	released bool // dropped by a retention policy (simulated until GC commits)
}

// treeNode is one distinct tree. refs counts the references from
// checkpoints and from distinct parent trees that are still alive.
type treeNode struct {
	refs      int32
	missing   bool
	subs      []objects.ID // subtree ids, one per dir entry
	blobs     []objects.ID // blob ids, one per file or symlink entry
	fileBytes int64        // logical size of the file and symlink entries
	visit     int32        // last owner walk that visited the tree (task index + 1)
}

// blobNode is one distinct blob (file content, symlink target, state blob,
// chunk, or delta base). refs counts references from live trees,
// checkpoints, chunked blobs and deltas.
type blobNode struct {
	refs    int32
	missing bool
	loc     objects.Locator
	rec     *record // the stored record holding the blob; nil when missing
	// needs are the blobs this one is read through: a chunked blob's
	// chunks, a delta's base. They live as long as it does.
	needs []objects.ID
	owner int32 // 0 unowned, k+1 only task k reaches it, -1 several tasks do
	site  refSite
}

// Graph is the reachability graph of the store's checkpoints: every tree
// and blob they reference, each loaded once, with reference counts so
// that dropping a checkpoint can be simulated exactly (what it alone kept
// alive is what dropping it frees). Missing or undecodable objects are
// reported to onProblem and kept as empty nodes so the counts stay exact.
type Graph struct {
	s         *Store
	cps       []*cpNode
	tasks     []string
	trees     map[objects.ID]*treeNode
	blobs     map[objects.ID]*blobNode
	records   map[recordKey]*record
	onProblem func(Problem)
	loaded    int64 // objects loaded, for progress
	progress  func(Progress)
}

// Load loads every checkpoint listed by a task (its seq entries) and
// everything they reference. Integrity failures go to onProblem (may be
// nil); other errors end the load.
func (s *Store) Load(ctx context.Context, onProblem func(Problem), progress func(Progress)) (*Graph, error) {
	g := &Graph{s: s, trees: map[objects.ID]*treeNode{}, blobs: map[objects.ID]*blobNode{},
		records: map[recordKey]*record{}, onProblem: onProblem, progress: progress}
	tasks, err := s.DB.Tasks()
	if err != nil {
		return nil, err
	}
	g.tasks = tasks
	for _, task := range tasks {
		if err := g.loadTask(ctx, task); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// loadTask loads the checkpoints task lists.
func (g *Graph) loadTask(ctx context.Context, task string) error {
	head, _, err := g.s.DB.Task(task)
	if err != nil {
		return err
	}
	ids, err := g.s.DB.TaskCheckpoints(task)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		cp, err := g.s.DB.Checkpoint(id)
		if err != nil {
			g.problem(Problem{Task: task, Object: id, Kind: "checkpoint", Message: "checkpoint " + id.Short() + ": " + describe(err)})
			continue
		}
		n := &cpNode{id: id, cp: cp, head: id == head.Head}
		g.cps = append(g.cps, n)
		if err := g.addTree(cp.Root, refSite{cp: n}); err != nil {
			return err
		}
		if !cp.State.IsZero() {
			if err := g.addBlob(cp.State, "state", refSite{cp: n, path: "<state>"}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Checkpoints, Trees and Blobs count the distinct objects loaded.
func (g *Graph) Checkpoints() int { return len(g.cps) }
func (g *Graph) Trees() int       { return len(g.trees) }
func (g *Graph) Blobs() int       { return len(g.blobs) }

// describe strips the not-found noise from an index or objects error for
// a problem message.
func describe(err error) string {
	switch {
	case errors.Is(err, index.ErrNotFound), errors.Is(err, objects.ErrNotFound):
		return "missing"
	}
	return err.Error()
}

func (g *Graph) problem(p Problem) {
	if g.onProblem != nil {
		g.onProblem(p)
	}
}

func (g *Graph) siteProblem(site refSite, id objects.ID, kind, msg string) {
	g.problem(site.at(Problem{Path: site.path, Object: id, Kind: kind, Message: msg}))
}

func (g *Graph) tick() {
	g.loaded++
	if g.progress != nil && g.loaded%1024 == 0 {
		g.progress(Progress{Phase: "mark", Done: g.loaded})
	}
}

// addTree takes one reference to tree id, loading it (and, recursively,
// what it references) the first time.
func (g *Graph) addTree(id objects.ID, site refSite) error {
	if n := g.trees[id]; n != nil {
		n.refs++
		return nil
	}
	n := &treeNode{refs: 1}
	g.trees[id] = n
	g.tick()
	t, err := g.s.DB.StoredTree(id)
	if err != nil {
		if !errors.Is(err, index.ErrNotFound) && !errors.Is(err, objects.ErrCorrupt) {
			return err
		}
		n.missing = true
		g.siteProblem(site, id, "tree", "tree "+id.Short()+" "+describe(err))
		return nil
	}
	for _, ent := range t.Entries {
		child := refSite{cp: site.cp, path: path.Join(site.path, ent.Name)}
		if ent.Kind == objects.KindDir {
			n.subs = append(n.subs, ent.ID)
			if err := g.addTree(ent.ID, child); err != nil {
				return err
			}
			continue
		}
		n.blobs = append(n.blobs, ent.ID)
		n.fileBytes += ent.Size
		if err := g.addBlob(ent.ID, "blob", child); err != nil {
			return err
		}
	}
	return nil
}

// addBlob takes one reference to blob id, looking up its locator (and the
// chunk list of a chunked blob) the first time.
func (g *Graph) addBlob(id objects.ID, kind string, site refSite) error {
	if n := g.blobs[id]; n != nil {
		n.refs++
		return nil
	}
	n := &blobNode{refs: 1, site: site}
	g.blobs[id] = n
	g.tick()
	loc, found, err := g.s.DB.Locator(id)
	switch {
	case err != nil && !errors.Is(err, objects.ErrCorrupt):
		return err
	case err != nil || !found:
		n.missing = true
		msg := kind + " " + id.Short() + " missing"
		if err != nil {
			msg = kind + " " + id.Short() + ": " + describe(err)
		}
		g.siteProblem(site, id, kind, msg)
		return nil
	}
	n.loc = loc
	needs, needKind, err := g.needs(id, loc)
	if err != nil {
		if !errors.Is(err, objects.ErrCorrupt) {
			return err
		}
		n.missing = true
		what := "chunk list"
		if loc.Delta() {
			what = "delta record"
		}
		g.siteProblem(site, id, kind, kind+" "+id.Short()+": "+what+": "+describe(err))
		return nil
	}
	g.hold(n)
	n.needs = needs
	for _, c := range needs {
		if err := g.addBlob(c, needKind, site); err != nil {
			return err
		}
	}
	return nil
}

// needs returns the blobs blob id (at loc) is read through, and the kind
// of problem each would be: a chunked blob's chunks ("chunk"), a delta's
// base (an earlier version of a file: "blob").
func (g *Graph) needs(id objects.ID, loc objects.Locator) ([]objects.ID, string, error) {
	switch {
	case loc.Chunked():
		chunks, err := g.s.Blobs.ChunkList(id)
		return chunks, "chunk", err
	case loc.Delta():
		base, err := g.s.Blobs.DeltaBase(id, loc)
		return []objects.ID{base}, "blob", err
	}
	return nil, "", nil
}
