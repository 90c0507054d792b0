package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// WorkspaceRef names the live workspace in Diff.
const WorkspaceRef = "workspace"

// minPrefix is the shortest hex prefix accepted as a ref.
const minPrefix = 4

// Resolve turns a ref into a checkpoint id. Accepted forms: a full id, a
// unique hex prefix of 4+ characters (any task), HEAD (the task's head),
// HEAD~N (N parents back; HEAD~ and HEAD^ both mean HEAD~1, as in git, and
// other HEAD^ forms such as HEAD^2 are refused: a checkpoint has one
// parent), and @N (the task's checkpoint with sequence number N). The empty
// string is no ref. Unknown refs fail with ErrUnknownRef; ambiguous
// prefixes with *AmbiguousRefError listing the candidates.
// An invalid task name fails with ErrBadRequest.
func (e *Engine) Resolve(ctx context.Context, task, ref string) (ID, error) {
	if err := ctx.Err(); err != nil {
		return ID{}, err
	}
	id, err := e.resolve(task, ref)
	return ID(id), translate(err, e.storeDir)
}

// resolve is Resolve without the cancellation check, for callers that already hold a context.
func (e *Engine) resolve(task, ref string) (objects.ID, error) {
	task, err := taskName(task)
	if err != nil {
		return objects.ID{}, err
	}
	switch {
	case ref == "HEAD":
		return e.headOf(task, ref)
	case strings.HasPrefix(ref, "HEAD~") || strings.HasPrefix(ref, "HEAD^"):
		n := 1
		if rest := ref[5:]; rest != "" {
			v, err := strconv.Atoi(rest)
			if err != nil || v < 0 || ref[4] == '^' {
				return objects.ID{}, unknownRef(task, ref)
			}
			n = v
		}
		return e.ancestor(task, ref, n)
	case strings.HasPrefix(ref, "@"):
		seq, err := strconv.ParseUint(ref[1:], 10, 64)
		if err != nil {
			return objects.ID{}, unknownRef(task, ref)
		}
		id, ok, err := e.db.CheckpointAt(task, seq)
		if err != nil {
			return objects.ID{}, err
		}
		if !ok {
			return objects.ID{}, unknownRef(task, ref)
		}
		return id, nil
	}
	return e.byPrefix(task, ref)
}

func unknownRef(task, ref string) error {
	return fmt.Errorf("%w %q in task %q: use an id or a unique prefix of %d+ hex characters, HEAD, HEAD~N or @N",
		ErrUnknownRef, ref, task, minPrefix)
}

func (e *Engine) headOf(task, ref string) (objects.ID, error) {
	head, ok, err := e.db.Task(task)
	if err != nil {
		return objects.ID{}, err
	}
	if !ok {
		return objects.ID{}, fmt.Errorf("%w %q: task %q has no checkpoints yet", ErrUnknownRef, ref, task)
	}
	return head.Head, nil
}

func (e *Engine) ancestor(task, ref string, n int) (objects.ID, error) {
	id, err := e.headOf(task, ref)
	if err != nil {
		return id, err
	}
	for ; n > 0; n-- {
		cp, err := e.checkpoint(id)
		if err != nil {
			return objects.ID{}, err
		}
		if cp.Parent.IsZero() {
			return objects.ID{}, fmt.Errorf("%w %q: the chain of task %q is shorter than that", ErrUnknownRef, ref, task)
		}
		id = cp.Parent
	}
	// The last step may land on a checkpoint that gc dropped.
	if _, err := e.checkpoint(id); errors.Is(err, ErrUnknownRef) {
		return objects.ID{}, fmt.Errorf("%w %q: checkpoint %s was dropped by gc", ErrUnknownRef, ref, id.Short())
	} else if err != nil {
		return objects.ID{}, err
	}
	return id, nil
}

func (e *Engine) byPrefix(task, ref string) (objects.ID, error) {
	lower := strings.ToLower(ref)
	if len(lower) < minPrefix || len(lower) > 2*objects.IDSize || strings.Trim(lower, "0123456789abcdef") != "" {
		return objects.ID{}, unknownRef(task, ref)
	}
	ids, err := e.db.CheckpointsWithPrefix(lower)
	if err != nil {
		return objects.ID{}, err
	}
	switch len(ids) {
	case 0:
		return objects.ID{}, unknownRef(task, ref)
	case 1:
		return ids[0], nil
	}
	return objects.ID{}, &AmbiguousRefError{Ref: ref, Candidates: publicIDs(ids)}
}

// resolveCheckpoint resolves ref in task and loads the checkpoint it names.
func (e *Engine) resolveCheckpoint(task, ref string) (objects.ID, index.Checkpoint, error) {
	id, err := e.resolve(task, ref)
	if err != nil {
		return id, index.Checkpoint{}, err
	}
	cp, err := e.checkpoint(id)
	return id, cp, err
}

// checkpoint loads a checkpoint, marking integrity failures.
func (e *Engine) checkpoint(id objects.ID) (index.Checkpoint, error) {
	cp, err := e.db.Checkpoint(id)
	if errors.Is(err, index.ErrNotFound) {
		return cp, fmt.Errorf("%w: checkpoint %s does not exist", ErrUnknownRef, id.Short())
	}
	return cp, err
}
