package remotesync

import (
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// copyTask copies every checkpoint of task to a new task named to, with
// the same sequence numbers, files, states and messages: each copy names
// the copy of its parent, so the new task's chain is the old one's. Its
// head is the copy of task's head. The copies share every tree and blob
// with the originals. A task to that exists already is left as it is
// (a rerun of a push cut short after the copy).
func copyTask(db *index.DB, task, to string) error {
	if _, ok, err := db.Task(to); err != nil || ok {
		return err
	}
	head, _, err := db.Task(task)
	if err != nil {
		return err
	}
	ids, err := db.TaskCheckpoints(task)
	if err != nil {
		return err
	}
	renamed := make(map[objects.ID]objects.ID, len(ids))
	b := db.NewBatch()
	defer b.Close()
	for _, id := range ids {
		cp, err := db.Checkpoint(id)
		if err != nil {
			return err
		}
		cp.Task = to
		if p, ok := renamed[cp.Parent]; ok {
			cp.Parent = p
		}
		if renamed[id], err = b.PutCheckpoint(cp); err != nil {
			return err
		}
	}
	b.SetTaskHead(to, index.TaskHead{Head: renamed[head.Head], LastSeq: head.LastSeq})
	return b.Commit()
}
