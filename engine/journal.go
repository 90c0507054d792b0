package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/lossless"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects"
)

// Journal records a restore in progress. It is written (and synced) before
// the first workspace change and cleared after the task head moves (made
// durable right after the restore answers, before the next write operation
// begins, which fails while it cannot be), so a journal found at Open means a restore was interrupted, or,
// after a power cut in the instant between a restore's answer and its
// clearing's sync, one that completing again finds done. Open
// only reads it (PendingRestore); the first operation that may change the
// workspace or a task's head settles it before anything else (see
// SettleRestore): it completes the restore while the task's head is still
// the one the journal recorded or already its target, and discards the
// journal otherwise. Either way the temporary files the interrupted
// restore may have left are removed, in the directories of Paths and
// above them (everywhere when Paths is empty); a path named as one
// (".ckpt-tmp-", a number, "-", a number) but last changed more than two
// seconds (coarse file-system clocks) before Started is a user's, and
// stays.
type Journal struct {
	Task   string
	Target ID
	Backup ID // zero when the restore took no backup
	// Head is the task's head when the journal was written (after the
	// backup). Zero in journals written before it was recorded: those
	// are judged by the head checkpoint's time against Started.
	Head  ID
	Paths []string
	// Force is the restore's RestoreOptions.Force, which its completion
	// keeps. False in journals written before it was recorded.
	Force bool
	// Capture is what the restore read of the workspace (RestoreOptions:
	// the Engine's own when it was given none), which its completion reads
	// alike. Nil in journals written before it was recorded: the
	// completing Engine's own.
	Capture *Capture
	Started time.Time
}

// journalFile is the journal's encoding on disk.
type journalFile struct {
	Task    string    `json:"task"`
	Target  ID        `json:"target"`
	Backup  ID        `json:"backup"`
	Head    ID        `json:"head"`
	Paths   []string  `json:"paths,omitempty"`
	Force   bool      `json:"force,omitempty"`
	Capture *Capture  `json:"capture,omitempty"`
	Started time.Time `json:"started"`
}

// journalLine is the journal file's JSON: journalFile, and Paths byte for
// byte when one is not valid UTF-8 (see package lossless), the names a
// resumed restore limits itself to.
type journalLine struct {
	journalFile
	PathsBase64 []string `json:"paths_base64,omitempty"`
}

// journalName is the journal's file name inside the store directory;
// legacyJournalName the one-JSON-object journal of older versions, which
// Open still reads and clearing removes. An older version does not see a
// journal this one left pending: a store must not go back to one while a
// restore is interrupted.
const (
	journalName       = "restore-journal.v2"
	legacyJournalName = "restore.journal"
)

func (e *Engine) journalPath() string { return filepath.Join(e.storeDir, journalName) }

// The journal file is written in place, so that recording a restore and
// clearing it each cost one data sync of a file that stays, not the
// file-system commits that creating, renaming and removing a name need
// (on a journaling file system each of those commits everything else
// pending too). Its layout:
//
//	0..2   journalMagic
//	3      journalPending or journalClear
//	4..7   n, the length of the record (little endian)
//	8..11  CRC-32C of bytes 4..7 and of the record
//	12..   the record: n bytes of journalLine's JSON
//
// Bytes past the record are left from longer ones before it. A restore's
// record is written over a clear one in one call and synced before the
// restore changes anything; one whose checksum fails was cut off by a crash
// before that sync returned (its bytes reach the disk in no set order), so
// no change followed it and it records nothing. A pending record, whose
// restore may have changed the workspace, is never written over: resuming
// writes the journal anew (a temporary file, renamed over it). The price: a
// synced record damaged later reads as no journal too, where the older
// format reported it. Clearing writes the state, a zero length and a zero
// checksum in one call within the first sector, so that no cut-off write of
// a later record can make the cleared one valid again.
const (
	journalMagic   = "CKJ"
	journalPending = '1'
	journalClear   = '0'
	journalHeader  = 12
)

// journalCRC is the checksum of journal records.
var journalCRC = crc32.MakeTable(crc32.Castagnoli)

// recordSum is the checksum of a record whose header is h: of its length
// (h[4:8]) and of rec.
func recordSum(h, rec []byte) uint32 {
	return crc32.Update(crc32.Checksum(h[4:8], journalCRC), journalCRC, rec)
}

// clearedJournal is what clearing writes at offset 3: the state, a zero
// length and a zero checksum (no record's: that of an empty one is not 0).
var clearedJournal = [journalHeader - 3]byte{journalClear}

// readJournal returns the journal of the store in dir, nil when there is
// none or it is clear. A journal an older version left (legacyJournalName)
// counts when the current one is clear or absent, or records the same
// restore (a resumed one writes it anew before removing the old). Two
// records of different restores (each version interrupted one) are for a
// person to untangle.
func readJournal(fsys vfs.FS, dir string) (*Journal, error) {
	cur, err := readJournalFile(fsys, filepath.Join(dir, journalName), true)
	if err != nil {
		return nil, err
	}
	legacy := filepath.Join(dir, legacyJournalName)
	old, err := readJournalFile(fsys, legacy, false)
	switch {
	case err != nil:
		return nil, err
	case cur == nil:
		return old, nil
	case old == nil || old.Task == cur.Task && old.Target == cur.Target && old.Started.Equal(cur.Started):
		return cur, nil
	}
	return nil, objects.MarkCorrupt(fmt.Errorf("two interrupted restores: an older version's in %s, to %s, and this one's in %s, to %s; "+
		"after checking the workspace remove the file of the one not to complete (the next writing command completes the other)",
		legacy, old.Target.Short(), filepath.Join(dir, journalName), cur.Target.Short()))
}

// readJournalFile returns the journal in the file at path, nil when there
// is none or (framed: the current format) it is clear.
func readJournalFile(fsys vfs.FS, path string, framed bool) (*Journal, error) {
	b, err := storefs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read restore journal: %w", err)
	}
	if framed {
		var pending bool
		if b, pending, err = journalRecord(b); err != nil {
			return nil, corruptJournal(path, err)
		}
		if !pending {
			return nil, nil
		}
	}
	var j journalLine
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, corruptJournal(path, err)
	}
	if j.PathsBase64 != nil {
		if j.Paths, err = lossless.DecodeList("paths_base64", j.PathsBase64); err != nil {
			return nil, corruptJournal(path, err)
		}
	}
	return (*Journal)(&j.journalFile), nil
}

// corruptJournal is the error of a journal file at path that cannot be
// read: the workspace may be half restored, so a person decides.
func corruptJournal(path string, why error) error {
	return objects.MarkCorrupt(fmt.Errorf("restore journal %s is unreadable (%v); remove it after checking the workspace", path, why))
}

// journalRecord returns the record of journal file b, ok false when the
// file is clear or its record was cut off.
func journalRecord(b []byte) (rec []byte, ok bool, err error) {
	if len(b) < journalHeader || string(b[:3]) != journalMagic {
		return nil, false, errors.New("not a journal")
	}
	switch b[3] {
	case journalClear:
		return nil, false, nil
	case journalPending:
	default:
		return nil, false, fmt.Errorf("unknown state %q", b[3])
	}
	n := int64(binary.LittleEndian.Uint32(b[4:8]))
	if journalHeader+n > int64(len(b)) {
		return nil, false, nil
	}
	rec = b[journalHeader : journalHeader+n]
	if recordSum(b, rec) != binary.LittleEndian.Uint32(b[8:12]) {
		return nil, false, nil
	}
	return rec, true, nil
}

// writeJournal stores j durably before any workspace change: written over
// the clear journal file in place and data-synced, or, for a store's first
// journal, when resuming (inPlace false: the file may hold j pending, and
// may not be durable itself) and over a clearing whose sync failed, as a
// new file renamed over it with its directory synced. An older version's journal, which a resumed restore
// writes anew, is removed once it is.
func (e *Engine) writeJournal(j *Journal, inPlace bool) error {
	rec, err := json.Marshal(journalLine{journalFile: journalFile(*j), PathsBase64: lossless.Base64List(j.Paths)})
	if err != nil {
		return err
	}
	b := make([]byte, journalHeader, journalHeader+len(rec))
	copy(b, journalMagic)
	b[3] = journalPending
	binary.LittleEndian.PutUint32(b[4:8], uint32(len(rec)))
	binary.LittleEndian.PutUint32(b[8:12], recordSum(b, rec))
	b = append(b, rec...)
	// Over a clearing not known durable the disk may hold a pending
	// record, which is never written over in place.
	inPlace = inPlace && !e.clearUnsynced.Load()
	if _, err = e.fs.Stat(e.journalPath()); errors.Is(err, os.ErrNotExist) || err == nil && !inPlace {
		err = storefs.WriteFile(e.fs, e.journalPath(), b)
	} else if err == nil {
		_, err = e.overwriteJournal(b, 0, true)
	}
	if err == nil {
		e.clearUnsynced.Store(false) // the record's sync covers the file
		err = e.removeLegacyJournal()
	}
	if err != nil {
		return fmt.Errorf("write restore journal: %w", err)
	}
	return nil
}

// journalWrite is a restore's journal record being written (writeJournal)
// while the restore plans; the restore changes nothing before it is
// waited for (journaled).
type journalWrite struct {
	j    *Journal
	done chan error
}

// startJournal begins writing j: in place over a clear journal, or anew
// (inPlace false) when resuming, since a record whose sync failed reads
// as written all the same (the page cache has it, the disk may not), here
// or in a later process.
func (e *Engine) startJournal(j *Journal, inPlace bool) *journalWrite {
	w := &journalWrite{j: j, done: make(chan error, 1)}
	go func() { w.done <- e.writeJournal(j, inPlace) }()
	return w
}

// journaled waits for w. Once it returns nil the record is durable and its
// restore pending (e.pending). A write that failed may have reached the
// page cache all the same: what the file holds is read back, and a
// restore it records is pending.
func (e *Engine) journaled(w *journalWrite) error {
	err := <-w.done
	if err == nil {
		e.pending = w.j
		return nil
	}
	on, rerr := readJournal(e.fs, e.storeDir)
	if on != nil {
		e.pending = on
	}
	if rerr != nil {
		return fmt.Errorf("%w (and reading it back: %v)", err, rerr)
	}
	return err
}

// unusedJournal ends w, if any, for a restore that failed with err before
// it changed anything (see dropUnusedJournal).
func (e *Engine) unusedJournal(w *journalWrite, resuming bool, err error) error {
	if w == nil {
		return err
	}
	return e.dropUnusedJournal(resuming, joinJournalError(err, "writing the restore journal", e.journaled(w)))
}

// dropUnusedJournal ends the journal of a restore that failed with err
// before it changed anything: the record written for it (even one whose
// write or sync failed: it may be on the disk all the same) is cleared
// again, and that of a resumed restore stays pending, as it was. A
// clearing whose sync fails is synced before the next write operation
// begins (lockForWrite), or that operation fails.
func (e *Engine) dropUnusedJournal(resuming bool, err error) error {
	if resuming {
		return err
	}
	written, cerr := e.writeClear(true)
	if written {
		e.pending = nil
	}
	return joinJournalError(err, "clearing it again", cerr)
}

// joinJournalError adds to err, what stopped a restore, the failure of
// what (nil: none) in the handling of its journal.
func joinJournalError(err error, what string, failure error) error {
	if failure == nil {
		return err
	}
	return fmt.Errorf("%w (and %s: %v)", err, what, failure)
}

// legacyJournalState is what an Engine knows of the older version's
// journal file (guarded by writeMu): nothing yet, its removal begun and not
// known durable (the unlink or the directory's sync failed), or durably
// absent.
type legacyJournalState uint8

const (
	legacyJournalUnknown legacyJournalState = iota
	legacyJournalRemoving
	legacyJournalGone
)

// removeLegacyJournal removes durably the journal an older version left,
// if any. A removal whose directory sync failed is synced again by the next
// call (the name is gone already, so a look finds nothing to remove); once
// the journal is known gone no call looks again. Only within one Engine: a
// process that exits after such a failure leaves the next one finding no
// file, and not syncing (syncing the directory once per Engine, to cover
// it, would add a flush to every cold restore).
func (e *Engine) removeLegacyJournal() error {
	if e.legacyJournal == legacyJournalGone {
		return nil
	}
	legacy := filepath.Join(e.storeDir, legacyJournalName)
	_, err := e.fs.Stat(legacy)
	switch {
	case errors.Is(err, os.ErrNotExist) && e.legacyJournal == legacyJournalRemoving:
		err = storefs.SyncDir(e.fs, e.storeDir)
	case errors.Is(err, os.ErrNotExist):
		err = nil
	case err == nil:
		e.legacyJournal = legacyJournalRemoving
		err = storefs.Remove(e.fs, legacy)
	}
	if err != nil {
		return err
	}
	e.legacyJournal = legacyJournalGone
	return nil
}

// clearJournal clears the journal durably, so a crash after a completed
// restore can never bring it back and roll the workspace forward again. A
// journal of an older version is removed.
func (e *Engine) clearJournal() error {
	_, err := e.writeClear(true)
	return err
}

// writeClear writes the journal's clearing and, with sync, syncs it.
// Without, it leaves the sync to the end of the write operation
// (unlockWrite), which answers first: a restore returns once every change
// it made is durable and its head has moved, and the next write operation
// begins once the clearing is durable too. A power cut in that instant
// brings the journal back, and the next writing operation completes the
// restore again (see SettleRestore): it finds the workspace as the restore
// left it, but for a path changed in that instant (a file removed is
// written again, one changed to content a checkpoint holds is rewritten,
// and, when the restore was forced, one holding what no checkpoint holds
// is overwritten). Once written (and when there is no journal file, which
// leaves nothing to sync) it reports written; a clearing written counts
// as unsynced (clearUnsynced) until a sync of it returns.
func (e *Engine) writeClear(sync bool) (written bool, err error) {
	if err := e.removeLegacyJournal(); err != nil {
		return false, fmt.Errorf("remove restore journal: %w", err)
	}
	if _, err := e.fs.Stat(e.journalPath()); errors.Is(err, os.ErrNotExist) {
		e.clearUnsynced.Store(false)
		return true, nil
	}
	written, err = e.overwriteJournal(clearedJournal[:], 3, sync)
	if written {
		e.clearUnsynced.Store(!sync || err != nil)
	}
	if err != nil {
		return written, fmt.Errorf("clear restore journal: %w", err)
	}
	return true, nil
}

// syncClearedJournal makes durable a clearing written without its sync
// (writeClear): written again and synced, since after a sync that failed
// the page that held it may count as clean without being on the disk. It
// stays to be synced when the sync fails.
func (e *Engine) syncClearedJournal() error {
	if !e.clearUnsynced.Load() {
		return nil
	}
	_, err := e.writeClear(true)
	return err
}

// overwriteJournal writes p at off in the existing journal file and, with
// sync, syncs its data; written reports whether the write landed (a sync
// that fails after it leaves it written, not known durable).
func (e *Engine) overwriteJournal(p []byte, off int64, sync bool) (written bool, err error) {
	f, err := e.fs.OpenReadWrite(e.journalPath(), vfs.WriteCategoryUnspecified)
	if err != nil {
		return false, err
	}
	if _, err = f.WriteAt(p, off); err == nil {
		written = true
		if sync {
			err = f.SyncData()
		}
	}
	return written, errors.Join(err, f.Close())
}
