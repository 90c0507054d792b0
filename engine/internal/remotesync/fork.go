package remotesync

import (
	"fmt"
	"unicode/utf8"

	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// A store whose task forked from the remote's keeps pushing its history
// as one fork task: the first push names it ForkName(task, tip) and the
// local record keeps the name under "sync/<remote>/f/<task>"; every later
// push of task that finds the remote's task still forked brings the fork
// up to task's head (mirrorTask) and pushes it, so only the new
// checkpoints go up.

// MaxTaskLen is the longest task name, in bytes, the engine takes.
const MaxTaskLen = 200

// ForkName is the name a fork of task whose newest checkpoint is tip is
// kept under: task, cut (at a character's start) so that the name stays
// within MaxTaskLen, then "~" and tip's short id.
func ForkName(task string, tip objects.ID) string {
	suffix := "~" + tip.Short()
	if n := MaxTaskLen - len(suffix); len(task) > n {
		for n > 0 && !utf8.RuneStart(task[n]) {
			n--
		}
		task = task[:n]
	}
	return task + suffix
}

func (s *Syncer) forkKey(task string) string { return "sync/" + s.Name + "/f/" + task }

// forkOf returns the task that carries the store's history of task to the
// remote while the remote's task has forked from it: the fork an earlier
// push made, brought up to task's head, or else a new one.
func (s *Syncer) forkOf(task string, lt localTask) (string, error) {
	if name, ok, err := s.DB.Config(s.forkKey(task)); err != nil || ok {
		if err != nil {
			return "", err
		}
		if mirrored, err := mirrorTask(s.DB, task, name); err != nil || mirrored {
			return name, err
		}
		// The fork has a history of its own since: start another.
	}
	fork := ForkName(task, lt.tip)
	mirrored, err := mirrorTask(s.DB, task, fork)
	if err != nil {
		return "", err
	}
	if !mirrored {
		return "", fmt.Errorf("push %q: its fork %q exists already with another history", task, fork)
	}
	b := s.DB.NewBatch()
	defer b.Close()
	b.SetConfig(s.forkKey(task), fork)
	return fork, b.Commit()
}

// mirrorTask makes task to a copy of task: every checkpoint of task that
// to lacks is copied with the same sequence number, files, state and
// message, its parent the copy of its parent, and to's head becomes the
// copy of task's head. Copies share every tree and blob with the
// originals. It changes nothing and reports false when to holds, at a
// sequence number of task, a checkpoint that is no copy of task's: to has
// a history of its own. A missing to is created.
func mirrorTask(db *index.DB, task, to string) (bool, error) {
	head, _, err := db.Task(task)
	if err != nil {
		return false, err
	}
	ids, err := db.TaskCheckpoints(task)
	if err != nil {
		return false, err
	}
	renamed := make(map[objects.ID]objects.ID, len(ids))
	b := db.NewBatch()
	defer b.Close()
	for _, id := range ids {
		cp, err := db.Checkpoint(id)
		if err != nil {
			return false, err
		}
		cp.Task = to
		if p, ok := renamed[cp.Parent]; ok {
			cp.Parent = p
		}
		have, ok, err := db.CheckpointAt(to, cp.Seq)
		if err != nil {
			return false, err
		}
		if ok {
			if same, err := sameCopy(db, have, cp); err != nil || !same {
				return false, err
			}
			renamed[id] = have
			continue
		}
		if renamed[id], err = b.PutCheckpoint(cp); err != nil {
			return false, err
		}
	}
	b.SetTaskHead(to, index.TaskHead{Head: renamed[head.Head], LastSeq: head.LastSeq})
	return true, b.Commit()
}

// sameCopy reports whether checkpoint have is cp but for its parent: the
// copy of one checkpoint whose parent a local gc may since have dropped
// from the original task.
func sameCopy(db *index.DB, have objects.ID, cp index.Checkpoint) (bool, error) {
	h, err := db.Checkpoint(have)
	if err != nil {
		return false, err
	}
	h.Parent, cp.Parent = objects.ID{}, objects.ID{}
	return index.CheckpointID(h) == index.CheckpointID(cp), nil
}
