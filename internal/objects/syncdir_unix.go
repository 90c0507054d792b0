//go:build unix

package objects

import (
	"fmt"
	"os"
)

// syncDir fsyncs a directory so that new entries in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("objects: fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("objects: fsync %s: %w", dir, err)
	}
	return nil
}
