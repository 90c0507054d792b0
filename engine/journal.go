package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/ckpt/ckpt/internal/lossless"
	"github.com/ckpt/ckpt/internal/storefs"
	"github.com/ckpt/ckpt/objects"
)

// Journal records a restore in progress. It is written (and synced) before
// the first workspace change and removed (durably) after the task head
// moves, so a journal found at Open means a restore was interrupted. Open
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
	Force   bool
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
	Started time.Time `json:"started"`
}

// journalLine is the journal file's JSON: journalFile, and Paths byte for
// byte when one is not valid UTF-8 (see package lossless), the names a
// resumed restore limits itself to.
type journalLine struct {
	journalFile
	PathsBase64 []string `json:"paths_base64,omitempty"`
}

// journalName is the journal's file name inside the store directory.
const journalName = "restore.journal"

func (e *Engine) journalPath() string { return filepath.Join(e.storeDir, journalName) }

// readJournal returns the journal at path, nil when there is none.
func readJournal(fsys vfs.FS, path string) (*Journal, error) {
	b, err := storefs.ReadFile(fsys, path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read restore journal: %w", err)
	}
	var j journalLine
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, objects.MarkCorrupt(fmt.Errorf("restore journal %s is unreadable (%v); remove it after checking the workspace", path, err))
	}
	if j.PathsBase64 != nil {
		if j.Paths, err = lossless.DecodeList("paths_base64", j.PathsBase64); err != nil {
			return nil, objects.MarkCorrupt(fmt.Errorf("restore journal %s is unreadable (%v); remove it after checking the workspace", path, err))
		}
	}
	return (*Journal)(&j.journalFile), nil
}

// writeJournal stores j durably (file and directory synced) before any
// workspace change: a temporary file, then a rename over the journal.
func (e *Engine) writeJournal(j *Journal) error {
	b, err := json.Marshal(journalLine{journalFile: journalFile(*j), PathsBase64: lossless.Base64List(j.Paths)})
	if err != nil {
		return err
	}
	if err := storefs.WriteFile(e.fs, e.journalPath(), b); err != nil {
		return fmt.Errorf("write restore journal: %w", err)
	}
	return nil
}

// removeJournal deletes the journal durably, so a crash after a completed
// restore can never bring it back and roll the workspace forward again.
func (e *Engine) removeJournal() error {
	if err := storefs.Remove(e.fs, e.journalPath()); err != nil {
		return fmt.Errorf("remove restore journal: %w", err)
	}
	return nil
}
