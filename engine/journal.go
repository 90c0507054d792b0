package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt/ckpt/internal/objects"
)

// Journal records a restore in progress. It is written (and synced) before
// the first workspace change and removed after the task head moves, so a
// journal found at Open means a restore was interrupted; running Restore
// again with the same target completes it without taking another backup.
type Journal struct {
	Task    string     `json:"task"`
	Target  objects.ID `json:"target"`
	Backup  objects.ID `json:"backup"`
	Paths   []string   `json:"paths,omitempty"`
	Started time.Time  `json:"started"`
}

func (e *Engine) journalPath() string { return filepath.Join(e.storeDir, "restore.journal") }

// readJournal returns the journal at path, nil when there is none.
func readJournal(path string) (*Journal, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read restore journal: %w", err)
	}
	var j Journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%w: restore journal %s is unreadable (%v); remove it after checking the workspace", ErrCorrupt, path, err)
	}
	return &j, nil
}

// writeJournal stores j durably (file and directory synced) before any workspace change.
func writeJournal(path string, j *Journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write restore journal: %w", err)
	}
	if _, err = f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		return fmt.Errorf("write restore journal: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
