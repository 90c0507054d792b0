// Package maint holds the mechanics of store maintenance: the
// reachability graph of the checkpoints (what is live, what dropping a
// checkpoint or a task frees), retention, the crash-safe collection that
// sweeps and rewrites packs, the integrity check and the size figures.
// Package engine decides when to run them, holds the lock and turns the
// results into its public types.
//
// Every byte figure counts each stored record once, by its pack and
// offset: the members of a group record share one Offset and Length.
package maint

import (
	"github.com/ckpt/ckpt/index"
	"github.com/ckpt/ckpt/objects"
)

// Store is what maintenance works on: the index and the packs of one store.
type Store struct {
	Dir   string // the store directory, for error reports
	DB    *index.DB
	Blobs *objects.Store
	// Step, when set (by crash tests), is called before every step of a
	// collection that changes the store: each record copy ("copy"), the
	// fsync of the copies ("sync"), the index commit ("commit"), each pack
	// removal ("remove") and truncation ("truncate").
	Step func(op string)
	// SliceBytes bounds one RecompressPack call (DefaultSliceBytes when 0).
	SliceBytes int64
	// SaveLevel makes rewrites compress at a save's level, not the
	// recompression's (objects.Store.RewriteAtSaveLevel).
	SaveLevel bool
	// Bases, when set, names the delta bases RecompressPack offers a blob
	// it compresses (objects.Move.Bases), unless the blob is the base of a
	// delta record; when a delta record cannot be read, RecompressPack
	// offers the slice no base at all.
	Bases func(id objects.ID) []objects.ID
	// DeltaBases, when not nil, keeps the base of every delta record
	// RecompressPack read, by its locator (a record never changes where
	// it lies), for the slices after it: each then reads only the delta
	// records written since.
	DeltaBases map[objects.Locator]objects.ID
}

// Progress reports how far a store-wide operation got in its current
// phase. Total is 0 when unknown.
type Progress struct {
	Phase       string
	Done, Total int64
}

func (s *Store) step(op string) {
	if s.Step != nil {
		s.Step(op)
	}
}

// PackBytes is the size of every pack on disk.
func (s *Store) PackBytes() (int64, error) {
	files, _, err := s.Blobs.PackFiles()
	var total int64
	for _, f := range files {
		total += f.Size
	}
	return total, err
}
