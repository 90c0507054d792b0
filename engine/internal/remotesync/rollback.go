package remotesync

import (
	"fmt"
	"strconv"
)

// A head's generation grows by one with every write (Push and GC write
// Gen+1 of the version they read, conditionally on it), so a head older
// than one this store has seen is the remote rolled back: restored from
// an older copy by whoever can write it. The local record keeps, under
// "sync/<remote>/h/<task>", the newest generation seen of each task;
// readHead refuses a head older than that, or none at all, before any of
// it is used, and readHead and writeHead move the record forward.

// seenKey is the record key of the newest generation of task's head seen.
func (s *Syncer) seenKey(task string) string { return "sync/" + s.Name + "/h/" + task }

// seenGen returns the newest generation of task's head this store has
// seen on the remote, 0 if none. A damaged record entry is forgotten.
func (s *Syncer) seenGen(task string) (uint64, error) {
	v, ok, err := s.DB.Config(s.seenKey(task))
	if err != nil || !ok {
		return 0, err
	}
	gen, _ := strconv.ParseUint(v, 10, 64)
	return gen, nil
}

// checkSeen fails with a *CorruptError when gen, the generation of task's
// head read at key (0: no head), is older than the newest this store has
// seen there, and records gen as seen when it is newer.
func (s *Syncer) checkSeen(key, task string, gen uint64) error {
	seen, err := s.seenGen(task)
	if err != nil || gen == seen {
		return err
	}
	if gen < seen {
		what := fmt.Sprintf("generation %d", gen)
		if gen == 0 {
			what = "none"
		}
		return &CorruptError{Key: key, Reason: fmt.Sprintf("the head of task %q was rolled back: it is %s, and this store saw generation %d there",
			task, what, seen), RolledBack: true}
	}
	return s.markSeen(task, gen)
}

// markSeen records gen as the newest generation of task's head seen.
func (s *Syncer) markSeen(task string, gen uint64) error {
	b := s.DB.NewBatch()
	defer b.Close()
	b.SetConfig(s.seenKey(task), strconv.FormatUint(gen, 10))
	return b.Commit()
}
