package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/internal/save"
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/internal/osfs"
	"github.com/ckpt/ckpt/objects"
)

// Only selects what a restore rewinds.
type Only string

// Restore flavours.
const (
	OnlyWorkspace Only = "workspace" // the files (default)
	OnlyState     Only = "state"     // the host's state blob only; files and head untouched
	OnlyBoth      Only = "both"      // files and state
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	Task string
	Only Only // default OnlyWorkspace
	// Paths restore only these workspace-relative files or directories;
	// one that is neither in the checkpoint nor in the workspace, or an
	// empty path, is ErrBadRequest ("." is the whole workspace), and so
	// are paths beside OnlyState, which restores no file. A Restore that
	// resumes the pending restore of the same paths does not check them
	// again: that restore may have removed one already.
	Paths    []string
	DryRun   bool // report the plan, change nothing
	NoBackup bool // skip the backup checkpoint of the current state
	Force    bool // overwrite uncaptured files that stand in the way instead of reporting conflicts
	// Capture, when set, is what the restore reads of the workspace (its
	// backup, the current state it plans from) instead of the Engine's
	// Options (see Capture); its journal records it, so that a completion
	// reads the workspace alike.
	Capture *Capture

	// streamFrom, when set, names the remote from which the blobs the
	// restore lacks are fetched while it writes (a clone), each file
	// written as its blob arrives, rather than all of them before.
	streamFrom string
	// answerFirst: the restore answers a caller (Restore), which gets its
	// result before the journal's clearing is synced (writeClear);
	// a completion that settles a journal within another operation syncs
	// it before that operation goes on.
	answerFirst bool
}

// Conflict is a path a restore left alone because an uncaptured file
// (ignored, skipped, or not yet saved into any checkpoint) stands there, or
// because it may not be changed.
type Conflict struct {
	Path   string
	Kind   ConflictKind
	Reason string // why, for the user
}

// ConflictKind says why a restore left a path alone.
type ConflictKind string

// Conflict kinds. RestoreOptions.Force overwrites the first four.
const (
	ConflictUncaptured   ConflictKind = "uncaptured"    // an uncaptured file stands where the target puts something
	ConflictUnsaved      ConflictKind = "unsaved"       // current content no checkpoint captures, with no backup taken
	ConflictUnread       ConflictKind = "unread"        // current content the restore could not read (Skipped.Kept): no checkpoint holds it
	ConflictDirHolds     ConflictKind = "dir-holds"     // a directory to replace holds uncaptured files
	ConflictBlockedBelow ConflictKind = "blocked-below" // a directory to replace holds paths left alone below it
	ConflictFault        ConflictKind = "fault"         // the path may not be changed (permission denied, held open)
	ConflictNameClash    ConflictKind = "name-clash"    // the file system cannot tell this name from another the target holds
	ConflictBadName      ConflictKind = "bad-name"      // the file system cannot hold this name (Windows: CON, trailing dot, ':')
	ConflictChanged      ConflictKind = "changed"       // another program changed the path after the backup read it, while the restore ran (Force does not overwrite it)
)

// RestoreResult reports what Restore did (or, for a dry run, would do).
type RestoreResult struct {
	Restored  ID
	Backup    ID       // the checkpoint holding the state before the restore; zero with NoBackup
	State     ID       // the target's state blob (read it with ReadState); zero when none
	Written   []string // files and symlinks written (or modes changed)
	Deleted   []string // files, symlinks and directories removed (not the temporaries an interrupted restore left, which completing it removes)
	Conflicts []Conflict
	// Discarded lists what Force destroyed (or, for a dry run, would
	// destroy) that no checkpoint holds, so no undo brings it back: the
	// files, symlinks and empty directories an uncaptured path standing in
	// the way, or a directory the target replaces, held (ignored files
	// among them), and, without a backup, the paths whose unsaved content
	// was replaced or removed.
	Discarded []string
	// Fetched counts the blobs fetched from remotes (left there by a pull)
	// before the files were written.
	Fetched  FetchedBlobs
	Duration time.Duration
	Phases   RestorePhases // where Duration went
	// Settled is another interrupted restore this one settled before it
	// began (see SettleRestore), nil when there was none.
	Settled *SettledRestore

	task    string // the task whose head moved
	resumed bool   // the restore completed the pending one
	// swept counts the temporaries of the interrupted restore this one
	// completed that it removed: its own leftovers, not in Deleted.
	swept int
}

// Restore makes the workspace's captured files equal to checkpoint ref.
//
// It first saves a backup checkpoint of the current state (unless NoBackup),
// so every restore can be undone. It then writes only what differs: each file
// atomically (temporary file in the same directory, then rename), through an
// os.Root so nothing outside the workspace can be written even through a
// symlink. It never deletes or overwrites anything the current state does not
// capture (ignored files, nested .git, skipped files): such paths are
// reported as conflicts unless Force. With NoBackup nothing records the
// current state, so it also leaves alone, as conflicts unless Force, every
// path whose current entry no task's head checkpoint holds identically
// (unsaved edits, new files, mode changes). A path it is not
// permitted to change is a conflict too, and the rest is restored.
//
// Conflicts do not make Restore fail: it returns them in the result, and the
// workspace matches ref everywhere except at those paths (and below them),
// which keep what they held. With OnlyState neither the files nor the head
// change. Otherwise, unless Paths limits it, the task's head moves
// to ref even then, so the next save records the conflicting paths as
// changes from ref; later checkpoints stay listed, so restoring one redoes.
//
// Durability: when Restore returns, every change it made (file contents,
// renames, removals, new directories), and the head's move when it moves,
// is on disk. A journal, written before the first change and cleared after
// the head moves, makes an interrupted restore resumable. (Its clearing is
// made durable right after Restore answers, before the Engine's next write
// operation begins and before Close returns; while its sync fails, the
// next write operation fails. A power cut in that instant brings the
// journal back, and completing it again finds the workspace as the restore
// left it but for paths changed in that instant: a file removed is written
// again, and one changed to content a checkpoint holds is rewritten; what
// no checkpoint holds stays, unless the restore was made with Force, whose
// completion overwrites it too and lists it in Discarded.) A Restore of the same task, target, Paths (in any
// order) and Force resumes it without a new backup, emitting its
// EventRestore with Resumed set, and any other Restore or writing
// operation (of this Engine, or of the next process to open the store)
// settles it first: it completes it as the journal records it, or discards
// the journal once the task's head has moved on (see SettleRestore). A
// cancelled ctx or another error (no space, I/O) stops the restore, with
// the journal kept once the restore may have changed the workspace (one
// that stops before is cleared again); the head has moved to ref already when the error came from
// the last flush, once every file was in place. A restore whose content
// cannot be had (an error matching ErrCorrupt: a blob or tree damaged, a
// pack missing; or a blob no store or reachable remote holds) stops and
// drops its journal, which no completion could ever clear: the paths it had renamed into place hold
// ref's content, the others what they held, and its backup the workspace
// from before. Damage a remote reports (blobs fetched as the restore
// writes, a Clone's) keeps the journal: once the remote is mended the
// restore completes.
func (e *Engine) Restore(ctx context.Context, ref string, opts RestoreOptions) (*RestoreResult, error) {
	start := time.Now()
	if err := opts.Capture.check(); err != nil { // before settling anything
		return nil, e.report(err, start)
	}
	if opts.Only == OnlyState && len(opts.Paths) > 0 {
		return nil, e.report(fmt.Errorf("%w: a restore of the state only (only: state) restores no file: give it no paths", ErrBadRequest), start)
	}
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, e.report(err, start)
	}
	defer unlock()
	var settled *SettledRestore
	if !opts.DryRun && !e.resumes(ref, opts) {
		if settled, err = e.settleLocked(ctx); err != nil {
			return nil, e.report(err, start)
		}
	}
	opts.answerFirst = true
	res, err := e.restoreLocked(ctx, ref, opts)
	if err != nil {
		if !opts.DryRun {
			if err = e.abandonIfUnreadable(ctx, err); e.pending != nil {
				err = &InterruptedRestoreError{Err: err}
			}
		}
		return nil, e.report(err, start)
	}
	res.Settled = settled
	res.Duration = time.Since(start)
	if !opts.DryRun {
		// The refresh vouches under the Engine's rules: after a restore
		// under others it would read every file written and find another
		// tree.
		if len(opts.Paths) == 0 && len(res.Written)+len(res.Deleted)+res.swept > 0 && e.sameCapture(opts.Capture, nil) {
			e.refresh.schedule(res.task)
		}
		e.emit(Event{Type: EventRestore, Task: res.task, Commit: res.Restored, Resumed: res.resumed, Duration: res.Duration})
	}
	return res, nil
}

func (e *Engine) restoreLocked(ctx context.Context, ref string, opts RestoreOptions) (*RestoreResult, error) {
	lap := restore.Laps()
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, err
	}
	target, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return nil, err
	}
	if cp.Task != task {
		return nil, &WrongTaskError{Checkpoint: ID(target), Task: cp.Task, Want: task}
	}
	only := opts.Only
	if only == "" {
		only = OnlyWorkspace
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	res := &RestoreResult{Restored: ID(target), State: ID(cp.State), task: task}
	switch only {
	case OnlyState:
		// The files stay as they are, so the head stays too: the next save's
		// parent is what the files were last saved as, not the state's checkpoint.
		return res, nil
	case OnlyWorkspace, OnlyBoth:
	default:
		return nil, fmt.Errorf("%w: what a restore rewinds (only) must be workspace, state or both, not %q", ErrBadRequest, only)
	}
	// The probe writes in the workspace: before the backup, whose scan then
	// covers its events, so that the restore's own are all that follow.
	names, err := e.nameRules()
	if err != nil {
		return nil, err
	}
	resuming := e.resumesPending(task, ID(target), filter, opts)
	res.resumed = resuming
	cur, err := e.currentState(ctx, task, cp.Seq, resuming, opts, res)
	if err != nil {
		return nil, err
	}
	res.Phases.Backup = lap()
	// The paths of a journal were checked when it was written; the
	// restore may have removed one since (a path only the workspace held),
	// and its completion must not fail for ever on that.
	if !resuming {
		if err := requireMatches(e.save.TreeSource(cur.snap), filter, "the checkpoint or the workspace", cp.Root, cur.snap.Root); err != nil {
			return nil, err
		}
	}
	// The journal is written while the restore plans, and waited for
	// before its first change (applyJournaled); a failure before that
	// clears it again (unusedJournal).
	var journal *journalWrite
	if !opts.DryRun {
		j := e.pending
		if !resuming {
			head, _, err := e.db.Task(task)
			if err != nil {
				return nil, err
			}
			j = &Journal{Task: task, Target: ID(target), Backup: res.Backup, Head: ID(head.Head), Paths: filter, Force: opts.Force,
				Capture: e.captureOf(opts.Capture), Started: time.Now().UTC()}
		}
		journal = e.startJournal(j, !resuming)
	}
	unused := func(err error) (*RestoreResult, error) { return nil, e.unusedJournal(journal, resuming, err) }
	// Completing a journal also removes the temporaries the interrupted
	// run left outside its paths, in the directories above them.
	plan, err := restore.NewPlan(ctx, e.save.TreeSource(cur.snap), cur.snap.Root, cp.Root, filter, names, resuming)
	if err != nil {
		return unused(err)
	}
	fsys, closeFS, err := e.openWorkspaceFS()
	if err != nil {
		return unused(fmt.Errorf("open workspace: %w", err))
	}
	defer closeFS()
	session := e.blobs.ReadSession()
	x := &restore.Applier{FS: fsys, Blobs: session, Force: opts.Force, Resuming: resuming,
		NameProblem: osfs.NameProblem}
	if e.opts.hooks.nameProblem != nil {
		x.NameProblem = e.opts.hooks.nameProblem
	}
	if resuming {
		x.TempsSince = e.pending.Started
	}
	x.Unread = unreadPaths(cur.snap.Skipped)
	if !cur.guard && !resuming && !opts.DryRun && e.places.roots == nil && e.sameCapture(opts.Capture, nil) {
		x.Scanned = scannedStat(e.save.ScannedStat(cur.snap))
	}
	defer func() { res.setApplied(x.Result) }()
	if cur.guard {
		if x.Unsaved, err = restore.UnsavedPaths(ctx, e.save.TreeSource(cur.snap), cur.baselines, cur.snap.Root); err != nil {
			return unused(err)
		}
	}
	if opts.DryRun {
		x.Preview(plan)
		res.Phases.Plan = lap()
		return res, nil
	}
	uses := plan.Blobs()
	blobs := slices.Collect(maps.Keys(uses))
	// Where the store holds the blobs the fetch's lookups found there; the
	// others (fetched, or on no remote) are looked up after it.
	located := map[objects.ID]objects.Locator{}
	held := func(id objects.ID, loc objects.Locator) { located[id] = loc }
	var stream *streamedFetch
	if opts.streamFrom != "" {
		stream, res.Fetched, err = e.streamBlobs(ctx, opts.streamFrom, plan, blobs, uses, session, held)
		if stream != nil {
			x.Blobs = stream.arrivals
		}
	} else {
		res.Fetched, err = e.fetchLocating(ctx, blobs, nil, held)
	}
	if err == nil {
		err = e.locate(session, slices.DeleteFunc(blobs, func(id objects.ID) bool {
			if _, ok := located[id]; ok {
				return true
			}
			return stream.brings(id) // not in the store yet: nothing to look up
		}), located)
	}
	if err != nil {
		if stream != nil {
			_, _ = stream.finish(err)
		}
		return unused(err)
	}
	// A backup taken now of the whole workspace is what the plan starts
	// from: a target reached without another writer may be vouched for,
	// by the watcher of the Engine's own capture only.
	var vouch objects.ID
	if !cur.guard && !resuming && len(filter) == 0 && e.sameCapture(opts.Capture, nil) {
		vouch = cp.Root
	}
	res.Phases.Plan = lap()
	err = e.applyJournaled(ctx, x, plan, journal, cur.snap.Root, vouch, opts.answerFirst, &res.Phases)
	if stream != nil {
		var fetched remotesync.FetchResult
		fetched, err = stream.finish(err)
		res.Fetched.add(fetched)
	}
	return res, err
}

// resumes reports whether a Restore of ref with opts would resume the
// pending restore rather than settle it first; an unresolvable ref or a
// bad path does not (the Restore then fails before any change).
func (e *Engine) resumes(ref string, opts RestoreOptions) bool {
	if e.pending == nil {
		return false
	}
	task, err := taskName(opts.Task)
	if err != nil {
		return false
	}
	target, _, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return false
	}
	filter, err := parsePathFilter(opts.Paths)
	return err == nil && e.resumesPending(task, ID(target), filter, opts)
}

// resumesPending reports whether a restore of target in task limited to
// filter, with opts, is the pending restore's own: the same task,
// target, paths, Force and Capture. Only that one may carry on from where the
// journal left off: the plan covers the request's paths while the
// journal's decide whether the head moves, so a restore of other paths
// would clear the journal with the workspace half restored, or leave
// the head behind a whole restore; and a restore with another Force would
// finish the journal's with conflicts it did not ask for, or overwrite
// what it would have left alone; and one that reads the workspace under
// other rules would plan from another current state.
func (e *Engine) resumesPending(task string, target ID, filter diffview.PathFilter, opts RestoreOptions) bool {
	j := e.pending
	return j != nil && j.Task == task && j.Target == target && samePaths(j.Paths, filter) && j.Force == opts.Force &&
		e.sameCapture(j.Capture, opts.Capture)
}

// samePaths reports whether two cleaned path lists name the same paths,
// in any order.
func samePaths(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// headRoot is the root of task's head checkpoint (zero: none yet).
func (e *Engine) headRoot(task string) (objects.ID, error) {
	head, ok, err := e.db.Task(task)
	if err != nil || !ok {
		return objects.ID{}, err
	}
	cp, err := e.db.Checkpoint(head.Head)
	if err != nil {
		return objects.ID{}, err
	}
	return cp.Root, nil
}

// nameRules probes how the workspace's file system matches names.
func (e *Engine) nameRules() (osfs.NameRules, error) {
	probe := osfs.ProbeNames
	if e.opts.hooks.probeNames != nil {
		probe = e.opts.hooks.probeNames
	}
	return e.places.nameRules(e.names.remembered(probe))
}

// openWorkspaceFS opens the seam restore writes the workspace through:
// one FS over every root of a multi-root workspace, so that one plan and
// one journal cover them all.
func (e *Engine) openWorkspaceFS() (restore.FS, func() error, error) {
	if e.places.roots == nil {
		return restore.OpenRoot(e.workspace, e.opts.hooks.wrapRestoreFS)
	}
	dirs := map[string]string{}
	for _, r := range e.places.roots {
		dirs[r.Name] = r.Dir
	}
	return restore.OpenRoots(dirs, e.opts.hooks.wrapRestoreFS)
}

// scannedStat adapts a scan's stat-cache records (save.Store.ScannedStat)
// to what the restore compares (restore.Applier.Scanned).
func scannedStat(records func(string) (index.CachedFile, bool)) func(string) (restore.ScannedStat, bool) {
	return func(rel string) (restore.ScannedStat, bool) {
		c, ok := records(rel)
		return restore.ScannedStat{Size: c.Size, MtimeNs: c.MtimeNs, Inode: c.Inode}, ok
	}
}

// setApplied copies what the applier did into the result.
func (r *RestoreResult) setApplied(a restore.Result) {
	r.Written, r.Deleted, r.Discarded, r.swept = a.Written, a.Deleted, a.Discarded, a.Swept
	r.Conflicts = make([]Conflict, len(a.Conflicts))
	for i, c := range a.Conflicts {
		r.Conflicts[i] = Conflict{Path: c.Path, Kind: ConflictKind(c.Kind), Reason: c.Reason}
	}
}

// applyJournaled carries out plan once the journal's write (startJournal;
// again, anew, when it resumes the journal's restore) is durable, and then
// clears it, durably unless answerFirst (writeClear); the head
// moves (for a whole-workspace restore) in between, alongside the workspace's last flush
// (restore.Applier.Alongside). vouch, unless zero, is the target's root,
// which the restore may vouch for; from is the plan's source root (see
// auditRestore). It records its phases in phases.
func (e *Engine) applyJournaled(ctx context.Context, x *restore.Applier, plan *restore.Plan, journal *journalWrite, from, vouch objects.ID, answerFirst bool, phases *RestorePhases) error {
	lap := restore.Laps()
	if err := e.journaled(journal); err != nil {
		return e.dropUnusedJournal(x.Resuming, err)
	}
	// From here on a failure leaves the journal: the restore is pending.
	j := journal.j
	if !x.Resuming {
		_ = e.pauseAt(ctx, pauseRestoreJournaled) // Apply reports a cancellation
	}
	if len(j.Paths) == 0 {
		// The head moves once every file is in place, while the workspace
		// is flushed: a crash before both are durable leaves the journal,
		// and the head at either end of it, from where the next write
		// completes the restore (journalOutdated), taking the journal's
		// head as saved content (currentState).
		x.Alongside = func() error { return e.moveHead(j.Task, objects.ID(j.Target)) }
	}
	unmute := e.muteReadAhead()
	audited := e.auditRestore(x, plan, from, vouch)
	phases.Journal = lap()
	err := x.Apply(ctx, plan)
	lap() // Apply's own time, in its Timing
	phases.applied(x.Timing)
	audited(err)
	unmute()
	if err != nil {
		return err // the journal stays pending, unless the caller abandons it (abandonIfUnreadable)
	}
	if _, err := e.writeClear(!answerFirst); err != nil {
		return err
	}
	phases.Finish = lap()
	e.pending = nil
	return nil
}

// current is the workspace's state before a restore and what protects it.
type current struct {
	snap *save.Snapshot
	// guard: no backup of snap is taken here, so paths whose entry in snap
	// no baseline holds identically are left alone (see restore.Applier.Unsaved).
	guard     bool
	baselines []objects.ID // root trees that capture what may be replaced
}

// currentState captures the workspace before a restore: as a backup
// checkpoint normally; hash-only for dry runs, NoBackup, or when resuming
// the interrupted restore whose journal already names the backup. Without
// a backup taken now, what protects unsaved content is the baselines: the
// head of every task (a workspace last saved or restored in another task
// is captured there) and, when resuming, the journal's backup and head.
func (e *Engine) currentState(ctx context.Context, task string, seq uint64, resuming bool, opts RestoreOptions, res *RestoreResult) (*current, error) {
	if opts.DryRun || opts.NoBackup || resuming {
		c := &current{guard: opts.NoBackup || resuming}
		if resuming {
			res.Backup = e.pending.Backup
		}
		if c.guard {
			// Resuming, the journal's backup and head: the restore moves the
			// head while its last renames may not be durable yet, so a crash
			// can leave paths at that head's content with the head at the
			// target.
			var also []objects.ID
			if resuming {
				also = []objects.ID{objects.ID(e.pending.Backup), objects.ID(e.pending.Head)}
			}
			var err error
			if c.baselines, err = e.baselines(also...); err != nil {
				return nil, err
			}
		}
		base, err := e.headRoot(task)
		if err != nil {
			return nil, err
		}
		snap, err := e.scan(ctx, opts.Capture, base)
		c.snap = snap
		return c, err
	}
	sr, snap, err := e.saveLocked(ctx, SaveOptions{Task: task, Message: fmt.Sprintf("backup before restore to @%d", seq), Capture: opts.Capture}, index.KindBackup)
	if err != nil {
		return nil, fmt.Errorf("backup before restore: %w", err)
	}
	res.Backup = ID(sr.id)
	return &current{snap: snap}, nil
}

// baselines returns the root trees of the checkpoints also (those not
// zero) and of every task's head, without repeats.
func (e *Engine) baselines(also ...objects.ID) ([]objects.ID, error) {
	tasks, err := e.db.Tasks()
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(also)
	for _, task := range tasks {
		head, ok, err := e.db.Task(task)
		if err != nil {
			return nil, err
		}
		if ok {
			ids = append(ids, head.Head)
		}
	}
	var roots []objects.ID
	for _, id := range ids {
		if id.IsZero() {
			continue
		}
		cp, err := e.checkpoint(id)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(roots, cp.Root) {
			roots = append(roots, cp.Root)
		}
	}
	return roots, nil
}

// moveHead points the task's head at target, keeping its sequence counter.
func (e *Engine) moveHead(task string, target objects.ID) error {
	head, _, err := e.db.Task(task)
	if err != nil {
		return err
	}
	b := e.db.NewBatch()
	defer b.Close()
	b.SetTaskHead(task, index.TaskHead{Head: target, LastSeq: head.LastSeq})
	return b.Commit()
}

// locate looks up where the blobs ids a restore writes are stored (it
// sorts ids), in id order with one pass of the index, and hands them with
// locs (the others, located already) to the session that reads them: a
// lookup per file probed every table of the index (a clone's restore of
// 90,000 files spent a tenth of its CPU there).
func (e *Engine) locate(session *objects.ReadSession, ids []objects.ID, locs map[objects.ID]objects.Locator) error {
	slices.SortFunc(ids, objects.CompareIDs)
	err := e.db.LocatorsOf(ids, func(id objects.ID, loc objects.Locator, found bool) error {
		if found {
			locs[id] = loc
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look up the restore's blobs: %w", err)
	}
	session.Locate(locs)
	return nil
}
