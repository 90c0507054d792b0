package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ckpt/ckpt/engine/internal/remotesync"
	"github.com/ckpt/ckpt/engine/internal/restore"
	"github.com/ckpt/ckpt/engine/remote"
	"github.com/ckpt/ckpt/engine/remote/crypt"
	"github.com/ckpt/ckpt/objects"
)

// SettledRestore reports what became of a restore that was interrupted: a
// journal Open found, or one a cancelled Restore of this Engine left.
// Exactly one of Completed and Discarded is set.
type SettledRestore struct {
	Journal *Journal
	// Completed is the restore carried to its end. Its conflicts are paths
	// the completion left alone (an edit made after the interruption).
	Completed *RestoreResult
	// Discarded says why the journal was dropped without replaying it: the
	// task's head moved after it was written, so replaying it would rewind
	// newer checkpointed work, or the store cannot give the content it
	// writes. The workspace is left as it is, but for the temporary files
	// the restore may have left, which are removed.
	Discarded string
}

// InterruptedRestoreError is a Restore that stopped (cancelled, or failed
// on I/O) once its journal was written: the workspace may be part way to
// the target, and the journal keeps the restore pending, for the next
// operation that may write to complete (see SettleRestore).
type InterruptedRestoreError struct{ Err error }

func (e *InterruptedRestoreError) Error() string {
	if fromRemote(e.Err) {
		return fmt.Sprintf("restore interrupted (%v); the journal keeps it pending: %s", e.Err, remoteMendAdvice)
	}
	return fmt.Sprintf("restore interrupted (%v); the journal keeps it pending: the next operation that may write completes it", e.Err)
}

// remoteMendAdvice is how a restore that a remote's damage stopped can
// end: no write completes it before the remote gives the content.
const remoteMendAdvice = "it completes once the remote is mended, or is dropped by the next write once the remote is removed with force"

// Unwrap returns the cause.
func (e *InterruptedRestoreError) Unwrap() error { return e.Err }

// PendingRestoreError reports an interrupted restore that could not be
// completed. The journal stays, so the next writing operation tries again.
type PendingRestoreError struct {
	Journal *Journal
	Err     error
}

// Error names the restore and why it could not be completed, and, for
// damage a remote reported, the ways on: mend the remote, or give up the
// blobs the store left there (RemoveRemote with force), after which the
// next write drops the journal.
func (e *PendingRestoreError) Error() string {
	msg := fmt.Sprintf("an interrupted restore to %s (task %s) could not be completed: %v",
		e.Journal.Target.Short(), e.Journal.Task, e.Err)
	if fromRemote(e.Err) {
		msg += "; " + remoteMendAdvice
	}
	return msg
}

// Unwrap returns the cause.
func (e *PendingRestoreError) Unwrap() error { return e.Err }

// SettleRestore settles a restore left interrupted, and returns nil when
// there is none. Every operation that may change the workspace or a task's
// head (Save, Restore, Drop, GC, Push, Pull, Clone) runs this step first, so
// no write ever lands on top of a half-restored workspace and a journal is
// never replayed later over newer work; a host calls it itself to report
// the outcome before its first write.
//
// While the task's head is still the one the journal recorded (or already
// the target: the restore moved it while its last flush ran, and that
// flush failed or was cut off, or the journal's clearing was), the restore
// is completed as Restore would resume it (removing the temporary files
// the interrupted run left, in the directories it writes in), and an
// EventRestore with Resumed set is emitted. Otherwise the head moved after
// the journal was written: the journal is cleared without restoring
// anything, only those temporary files are removed from the workspace,
// and an EventWarning says so. A completion that fails because the store
// cannot give the target's content (ErrCorrupt: a blob or tree damaged or
// missing in this store, not on a remote; or a blob no store or reachable
// remote holds) could never succeed: its journal is dropped the same way,
// with the reason in Discarded, and the write that settled it goes on. It fails
// with a *PendingRestoreError, keeping the journal, when the completion
// fails otherwise, and with ErrBadRequest on an Engine opened ReadOnly.
func (e *Engine) SettleRestore(ctx context.Context) (*SettledRestore, error) {
	unlock, err := e.lockForWrite()
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	defer unlock()
	s, err := e.settleLocked(ctx)
	return s, translate(err, e.storeDir)
}

// beginWrite serialises an operation that may change the workspace or a
// task's head, after settling an interrupted restore (see SettleRestore).
func (e *Engine) beginWrite(ctx context.Context) (unlock func(), settled *SettledRestore, err error) {
	unlock, err = e.lockForWrite()
	if err != nil {
		return nil, nil, err
	}
	if settled, err = e.settleLocked(ctx); err != nil {
		unlock()
		return nil, nil, err
	}
	return unlock, settled, nil
}

// settleLocked is SettleRestore under the write lock.
func (e *Engine) settleLocked(ctx context.Context) (*SettledRestore, error) {
	return e.settleStreaming(ctx, "")
}

// settleStreaming is settleLocked fetching the blobs the completion lacks
// from remote streamFrom, when set, while it writes (RestoreOptions).
func (e *Engine) settleStreaming(ctx context.Context, streamFrom string) (*SettledRestore, error) {
	j := e.pending
	if j == nil {
		return nil, nil
	}
	why, err := e.journalOutdated(j)
	if err != nil {
		return nil, &PendingRestoreError{Journal: j, Err: err}
	}
	if why != "" {
		if err := e.discardJournal(ctx, j, why); err != nil {
			return nil, &PendingRestoreError{Journal: j, Err: err}
		}
		return &SettledRestore{Journal: j, Discarded: why}, nil
	}
	start := time.Now()
	res, err := e.restoreLocked(ctx, j.Target.String(), RestoreOptions{Task: j.Task, Paths: j.Paths, Force: j.Force, Capture: j.Capture, streamFrom: streamFrom})
	if err != nil {
		err = e.abandonIfUnreadable(ctx, err)
		if abandoned := (*abandonedRestoreError)(nil); errors.As(err, &abandoned) {
			return &SettledRestore{Journal: j, Discarded: abandoned.why()}, nil
		}
		return nil, &PendingRestoreError{Journal: j, Err: err}
	}
	res.Duration = time.Since(start)
	e.emit(Event{Type: EventRestore, Task: res.task, Commit: res.Restored, Resumed: true, Duration: res.Duration})
	return &SettledRestore{Journal: j, Completed: res}, nil
}

// discardJournal drops journal j without replaying it, for reason why:
// the temporary files its restore may have left are removed, the journal
// is cleared, and an EventWarning says so.
func (e *Engine) discardJournal(ctx context.Context, j *Journal, why string) error {
	if err := e.sweepTemps(ctx, j); err != nil {
		return err
	}
	if err := e.clearJournal(); err != nil {
		return err
	}
	e.pending = nil
	msg := fmt.Sprintf("discarded an interrupted restore to %s (task %s) without replaying it: %s",
		j.Target.Short(), j.Task, why)
	e.emit(Event{Type: EventWarning, Task: j.Task, Commit: j.Target, Message: msg})
	return nil
}

// abandonedRestoreError is the error of a restore that stopped because
// the content it writes cannot be had (see abandonIfUnreadable), and
// whose journal was then dropped: completing it
// could never succeed, and its journal would stop every later write. The
// paths it had renamed into place hold the target's content and the
// others what they held (never a mix within a file); the temporaries it
// left are removed, and its backup, when it took one, holds the
// workspace from before.
type abandonedRestoreError struct {
	journal *Journal
	err     error
}

func (a *abandonedRestoreError) Error() string {
	msg := fmt.Sprintf("restore to %s stopped and was abandoned: %v; the paths it had not reached are as they were", a.journal.Target.Short(), a.err)
	if !a.journal.Backup.IsZero() {
		msg += fmt.Sprintf(", and the backup %s holds the workspace from before it", a.journal.Backup.Short())
	}
	return msg
}

func (a *abandonedRestoreError) Unwrap() error { return a.err }

// why is the reason a settlement gives for the journal it dropped.
func (a *abandonedRestoreError) why() string {
	return fmt.Sprintf("the store cannot give its content (%v)", a.err)
}

// abandonIfUnreadable drops the pending journal when err, its restore's
// failure, says the content the restore writes cannot be had: this store
// holds it damaged (ErrCorrupt: a blob or tree, a missing pack), or
// neither it nor a remote it can reach holds it at all (a blob not found).
// It returns the *abandonedRestoreError that reports it; any other err is
// returned as it is, with the journal kept. Damage a remote reported (a
// blob fetched as the restore writes, a clone's) keeps it too: the remote
// may be mended, and the restore completed then. Should the drop fail, the
// journal stays too.
func (e *Engine) abandonIfUnreadable(ctx context.Context, err error) error {
	j := e.pending
	unreadable := errors.Is(err, ErrCorrupt) && !fromRemote(err) || errors.Is(err, objects.ErrNotFound)
	if j == nil || !unreadable {
		return err
	}
	a := &abandonedRestoreError{journal: j, err: err}
	if derr := e.discardJournal(ctx, j, a.why()); derr != nil {
		return fmt.Errorf("%w (and abandoning it: %v)", err, derr)
	}
	return a
}

// fromRemote reports whether err is damage a remote reported: an object
// that does not verify or authenticate, in the remote's terms or in this
// package's (remoteError).
func fromRemote(err error) bool {
	var sync *remotesync.CorruptError
	var public *CorruptError
	return errors.As(err, &sync) || errors.Is(err, remote.ErrDamaged) || errors.Is(err, crypt.ErrAuth) ||
		errors.As(err, &public) && public.OnRemote
}

// sweepTemps removes the temporary files and directories an interrupted
// restore may have left (restore.Sweep) in the directories it wrote in:
// those of j's paths and above them, or the whole workspace. Completing
// the restore would have removed them; dropping its journal must too, or
// the next save captures them. A path named as a temporary but last
// changed before the restore began (restore.Applier.TempsSince) is a
// user's, and stays.
func (e *Engine) sweepTemps(ctx context.Context, j *Journal) error {
	base, err := e.headRoot(j.Task)
	if err != nil {
		return err
	}
	snap, err := e.scan(ctx, j.Capture, base)
	if err != nil {
		return err
	}
	plan, err := restore.Sweep(ctx, e.save.TreeSource(snap), snap.Root, j.Paths)
	if err != nil {
		return err
	}
	fsys, closeFS, err := e.openWorkspaceFS()
	if err != nil {
		return fmt.Errorf("open workspace: %w", err)
	}
	defer closeFS()
	x := &restore.Applier{FS: fsys, Resuming: true, TempsSince: j.Started}
	if err := x.Apply(ctx, plan); err != nil {
		return fmt.Errorf("remove the interrupted restore's temporary files: %w", err)
	}
	return nil
}

// journalOutdated says why replaying j would rewind work saved after it was
// written ("" when it would not): the task's head is neither the journal's
// recorded head nor its target. A journal that records no head is outdated
// when the head checkpoint is younger than the journal.
func (e *Engine) journalOutdated(j *Journal) (string, error) {
	head, ok, err := e.db.Task(j.Task)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("task %s no longer exists", j.Task), nil
	}
	if ID(head.Head) == j.Target || (!j.Head.IsZero() && ID(head.Head) == j.Head) {
		return "", nil
	}
	if j.Head.IsZero() {
		cp, err := e.checkpoint(head.Head)
		if err != nil {
			return "", err
		}
		if !cp.Time.After(j.Started) {
			return "", nil
		}
	}
	return fmt.Sprintf("the task's head moved to %s after the restore was interrupted", ID(head.Head).Short()), nil
}
