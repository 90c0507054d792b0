package engine

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/ckpt/ckpt/internal/index"
	"github.com/ckpt/ckpt/internal/objects"
)

// Problem is one integrity failure: what is wrong, and where it was first
// seen (the checkpoint and workspace path that reference the object).
type Problem struct {
	Checkpoint ID // zero for store-level problems (a locator, a task)
	Task       string
	Seq        uint64
	Path       string // workspace-relative path; "" for the root tree or the store
	Object     ID     // the tree, blob, chunk or checkpoint at fault
	Kind       string // "checkpoint", "tree", "blob", "chunk", "state", "locator" or "task"
	Message    string
}

// String renders the problem on one line.
func (p Problem) String() string {
	where := ""
	if !p.Checkpoint.IsZero() {
		where = fmt.Sprintf("checkpoint %s (task %s @%d) ", p.Checkpoint.Short(), p.Task, p.Seq)
	}
	if p.Path != "" {
		where += p.Path + ": "
	} else if where != "" {
		where += "/: "
	}
	return where + p.Message
}

// refSite is where an object was first reached from.
type refSite struct {
	cp   *cpNode
	path string
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
// or chunk). refs counts references from live trees, checkpoints and
// chunked blobs.
type blobNode struct {
	refs    int32
	missing bool
	loc     objects.Locator
	chunks  []objects.ID
	owner   int32 // 0 unowned, k+1 only task k reaches it, -1 several tasks do
	site    refSite
}

// refGraph is the reachability graph of the store's checkpoints: every
// tree and blob they reference, each loaded once, with reference counts so
// that dropping a checkpoint can be simulated exactly (what it alone kept
// alive is what dropping it frees). Missing or undecodable objects are
// reported to onProblem and kept as empty nodes so the counts stay exact.
type refGraph struct {
	e         *Engine
	cps       []*cpNode
	tasks     []string
	trees     map[objects.ID]*treeNode
	blobs     map[objects.ID]*blobNode
	onProblem func(Problem)
	loaded    int64 // objects loaded, for progress
	progress  func(PhaseProgress)
}

// PhaseProgress reports how far a store-wide operation (GC, Verify) got in
// its current phase. Total is 0 when unknown.
type PhaseProgress struct {
	Phase       string
	Done, Total int64
}

// loadGraph loads every checkpoint listed by a task (its seq entries) and
// everything they reference.
func (e *Engine) loadGraph(ctx context.Context, onProblem func(Problem), progress func(PhaseProgress)) (*refGraph, error) {
	g := &refGraph{e: e, trees: map[objects.ID]*treeNode{}, blobs: map[objects.ID]*blobNode{},
		onProblem: onProblem, progress: progress}
	tasks, err := e.db.Tasks()
	if err != nil {
		return nil, storeError(err, e.storeDir)
	}
	g.tasks = tasks
	for _, task := range tasks {
		head, _, err := e.db.Task(task)
		if err != nil {
			return nil, storeError(err, e.storeDir)
		}
		ids, err := e.db.TaskCheckpoints(task)
		if err != nil {
			return nil, storeError(err, e.storeDir)
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			cp, err := e.db.Checkpoint(id)
			if err != nil {
				g.problem(Problem{Task: task, Object: ID(id), Kind: "checkpoint", Message: "checkpoint " + id.Short() + ": " + describe(err)})
				continue
			}
			n := &cpNode{id: id, cp: cp, head: id == head.Head}
			g.cps = append(g.cps, n)
			if err := g.addTree(cp.Root, refSite{cp: n}); err != nil {
				return nil, err
			}
			if !cp.State.IsZero() {
				if err := g.addBlob(cp.State, "state", refSite{cp: n, path: "<state>"}); err != nil {
					return nil, err
				}
			}
		}
	}
	return g, nil
}

// describe strips package prefixes and the not-found noise from an index
// or objects error for a problem message.
func describe(err error) string {
	switch {
	case errors.Is(err, index.ErrNotFound), errors.Is(err, objects.ErrNotFound):
		return "missing"
	}
	return plainText(err)
}

func (g *refGraph) problem(p Problem) {
	if g.onProblem != nil {
		g.onProblem(p)
	}
}

func (g *refGraph) siteProblem(site refSite, id objects.ID, kind, msg string) {
	p := Problem{Path: site.path, Object: ID(id), Kind: kind, Message: msg}
	if site.cp != nil {
		p.Checkpoint, p.Task, p.Seq = ID(site.cp.id), site.cp.cp.Task, site.cp.cp.Seq
	}
	g.problem(p)
}

func (g *refGraph) tick() {
	g.loaded++
	if g.progress != nil && g.loaded%1024 == 0 {
		g.progress(PhaseProgress{Phase: "mark", Done: g.loaded})
	}
}

// addTree takes one reference to tree id, loading it (and, recursively,
// what it references) the first time.
func (g *refGraph) addTree(id objects.ID, site refSite) error {
	if n := g.trees[id]; n != nil {
		n.refs++
		return nil
	}
	n := &treeNode{refs: 1}
	g.trees[id] = n
	g.tick()
	t, err := g.e.db.Tree(id)
	if err != nil {
		if !errors.Is(err, index.ErrNotFound) && !errors.Is(err, index.ErrCorrupt) {
			return err
		}
		n.missing = true
		g.siteProblem(site, id, "tree", "tree "+id.Short()+" "+describe(err))
		return nil
	}
	for _, ent := range t.Entries {
		child := refSite{cp: site.cp, path: path.Join(site.path, ent.Name)}
		if ent.Kind == index.KindDir {
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
func (g *refGraph) addBlob(id objects.ID, kind string, site refSite) error {
	if n := g.blobs[id]; n != nil {
		n.refs++
		return nil
	}
	n := &blobNode{refs: 1, site: site}
	g.blobs[id] = n
	g.tick()
	loc, found, err := g.e.db.Locator(id)
	switch {
	case err != nil && !errors.Is(err, index.ErrCorrupt):
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
	if loc.Flags&objects.FlagChunked == 0 {
		return nil
	}
	chunks, err := g.e.blobs.ChunkList(id)
	if err != nil {
		if !errors.Is(err, objects.ErrCorrupt) {
			return err
		}
		n.missing = true
		g.siteProblem(site, id, kind, kind+" "+id.Short()+": chunk list: "+describe(err))
		return nil
	}
	n.chunks = chunks
	for _, c := range chunks {
		if err := g.addBlob(c, "chunk", site); err != nil {
			return err
		}
	}
	return nil
}

// release drops checkpoint n from the graph and returns the record bytes
// of the blobs nothing else keeps alive.
func (g *refGraph) release(n *cpNode) int64 {
	if n.released {
		return 0
	}
	n.released = true
	freed := g.decTree(n.cp.Root)
	if !n.cp.State.IsZero() {
		freed += g.decBlob(n.cp.State)
	}
	return freed
}

func (g *refGraph) decTree(id objects.ID) int64 {
	n := g.trees[id]
	if n == nil || n.refs <= 0 {
		return 0
	}
	if n.refs--; n.refs > 0 {
		return 0
	}
	var freed int64
	for _, s := range n.subs {
		freed += g.decTree(s)
	}
	for _, b := range n.blobs {
		freed += g.decBlob(b)
	}
	return freed
}

func (g *refGraph) decBlob(id objects.ID) int64 {
	n := g.blobs[id]
	if n == nil || n.refs <= 0 {
		return 0
	}
	if n.refs--; n.refs > 0 {
		return 0
	}
	freed := int64(n.loc.Length)
	for _, c := range n.chunks {
		freed += g.decBlob(c)
	}
	return freed
}

// liveBytes is the record bytes of every blob still referenced.
func (g *refGraph) liveBytes() int64 {
	var total int64
	for _, n := range g.blobs {
		if n.refs > 0 {
			total += int64(n.loc.Length)
		}
	}
	return total
}

// liveTree and liveBlob report whether the id is still referenced.
func (g *refGraph) liveTree(id objects.ID) bool {
	n := g.trees[id]
	return n != nil && n.refs > 0
}

func (g *refGraph) liveBlob(id objects.ID) bool {
	n := g.blobs[id]
	return n != nil && n.refs > 0
}

// markOwners records, for every live blob, whether one task alone reaches
// it (owner = task index + 1) or several do (owner = -1).
func (g *refGraph) markOwners() {
	for i, task := range g.tasks {
		mark := int32(i + 1)
		for _, c := range g.cps {
			if !c.released && c.cp.Task == task {
				g.ownTree(c.cp.Root, mark)
				if !c.cp.State.IsZero() {
					g.ownBlob(c.cp.State, mark)
				}
			}
		}
	}
}

func (g *refGraph) ownTree(id objects.ID, mark int32) {
	n := g.trees[id]
	if n == nil || n.visit == mark {
		return
	}
	n.visit = mark
	for _, s := range n.subs {
		g.ownTree(s, mark)
	}
	for _, b := range n.blobs {
		g.ownBlob(b, mark)
	}
}

func (g *refGraph) ownBlob(id objects.ID, mark int32) {
	n := g.blobs[id]
	if n == nil || n.owner == mark || n.owner == -1 {
		return
	}
	if n.owner == 0 {
		n.owner = mark
	} else {
		n.owner = -1
	}
	for _, c := range n.chunks {
		g.ownBlob(c, mark)
	}
}

// exclusiveBytes returns, per task name, the record bytes of the blobs
// only that task's checkpoints reference: what dropping the task frees.
func (g *refGraph) exclusiveBytes() map[string]int64 {
	g.markOwners()
	out := make(map[string]int64, len(g.tasks))
	for _, task := range g.tasks {
		out[task] = 0
	}
	for _, n := range g.blobs {
		if n.owner > 0 && n.refs > 0 {
			out[g.tasks[n.owner-1]] += int64(n.loc.Length)
		}
	}
	return out
}

// logicalSize returns the total size of the files under tree id, counting
// every occurrence; memo caches it per tree.
func (g *refGraph) logicalSize(id objects.ID, memo map[objects.ID]int64) int64 {
	if v, ok := memo[id]; ok {
		return v
	}
	n := g.trees[id]
	if n == nil {
		return 0
	}
	total := n.fileBytes
	for _, s := range n.subs {
		total += g.logicalSize(s, memo)
	}
	memo[id] = total
	return total
}
