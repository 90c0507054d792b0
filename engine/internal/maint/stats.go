package maint

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/ckpt/ckpt/objects"
)

// Sizes measures the store; the fields mean what engine.StoreStats says.
type Sizes struct {
	DiskBytes    int64
	IndexBytes   int64
	PackBytes    int64
	Packs        []PackSize
	LiveBytes    int64
	Checkpoints  int
	Trees        int
	Blobs        int
	LogicalBytes int64
	UniqueBytes  int64
	StoredBytes  int64
	Tasks        []TaskSize
}

// PackSize is one pack file and the bytes of its live records, its header
// included when any record is live.
type PackSize struct {
	Pack      uint32
	Bytes     int64
	LiveBytes int64
}

// TaskSize is one task's share of the store.
type TaskSize struct {
	Name           string
	Checkpoints    int
	LogicalBytes   int64
	ExclusiveBytes int64
}

// Sizes reads every tree once and no blob content (of a delta, only its
// record's head, for its base).
func (s *Store) Sizes(ctx context.Context) (*Sizes, error) {
	g, err := s.Load(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	st := &Sizes{Checkpoints: len(g.cps), Trees: len(g.trees), Blobs: len(g.blobs)}
	if err := s.diskUsage(g, st); err != nil {
		return nil, err
	}
	for _, b := range g.blobs {
		if b.rec != nil && !b.loc.Chunked() {
			st.UniqueBytes += b.loc.Size
		}
	}
	g.eachLiveRecord(func(loc objects.Locator, _ *record) {
		if !loc.Chunked() {
			st.StoredBytes += loc.PayloadLen()
		}
	})
	memo := map[objects.ID]int64{}
	exclusive := g.ExclusiveBytes()
	byTask := map[string]*TaskSize{}
	for _, name := range g.tasks {
		st.Tasks = append(st.Tasks, TaskSize{Name: name, ExclusiveBytes: exclusive[name]})
	}
	for i := range st.Tasks {
		byTask[st.Tasks[i].Name] = &st.Tasks[i]
	}
	for _, c := range g.cps {
		n := g.logicalSize(c.cp.Root, memo)
		st.LogicalBytes += n
		if t := byTask[c.cp.Task]; t != nil {
			t.Checkpoints++
			t.LogicalBytes += n
		}
	}
	return st, nil
}

// diskUsage fills the on-disk sizes: the store directory, the packs and
// the live bytes of each.
func (s *Store) diskUsage(g *Graph, st *Sizes) error {
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed while walking (a pebble compaction)
		}
		st.DiskBytes += fi.Size()
		if rel, _ := filepath.Rel(s.Dir, p); filepath.Dir(rel) == "index" {
			st.IndexBytes += fi.Size()
		}
		return nil
	})
	if err != nil {
		return err
	}
	live := map[uint32]int64{}
	g.eachLiveRecord(func(loc objects.Locator, _ *record) { live[loc.Pack] += int64(loc.Length) })
	files, nums, err := s.Blobs.PackFiles()
	if err != nil {
		return err
	}
	for _, n := range nums {
		ps := PackSize{Pack: n, Bytes: files[n].Size, LiveBytes: live[n]}
		if ps.LiveBytes > 0 {
			ps.LiveBytes += files[n].Start
		}
		st.Packs = append(st.Packs, ps)
		st.PackBytes += ps.Bytes
		st.LiveBytes += ps.LiveBytes
	}
	return nil
}
