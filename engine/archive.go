package engine

import (
	"archive/tar"
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/ckpt/ckpt/diffview"
	"github.com/ckpt/ckpt/objects"
)

// ArchiveFormat names an archive Export can write.
type ArchiveFormat string

// Archive formats.
const (
	ArchiveTar ArchiveFormat = "tar" // POSIX tar (PAX for long names)
	ArchiveZip ArchiveFormat = "zip"
)

// WriteArchive writes the tree of checkpoint ref (or the paths of it
// given in opts) to w as a tar or zip archive: directories, files with
// their modes, symlinks, every entry stamped with the checkpoint's time.
// Like Export it never touches the workspace or the head. The result
// lists the files and symlinks written.
func (e *Engine) WriteArchive(ctx context.Context, ref string, w io.Writer, format ArchiveFormat, opts ExportOptions) (*ExportResult, error) {
	res, err := e.writeArchive(ctx, ref, w, format, opts)
	return res, translate(err, e.storeDir)
}

func (e *Engine) writeArchive(ctx context.Context, ref string, w io.Writer, format ArchiveFormat, opts ExportOptions) (*ExportResult, error) {
	task, err := taskName(opts.Task)
	if err != nil {
		return nil, err
	}
	filter, err := parsePathFilter(opts.Paths)
	if err != nil {
		return nil, err
	}
	var aw archiveWriter
	switch format {
	case ArchiveTar:
		aw = tarArchive{tar.NewWriter(w)}
	case ArchiveZip:
		aw = zipArchive{zip.NewWriter(w)}
	default:
		return nil, fmt.Errorf("%w: archive format must be tar or zip, not %q", ErrBadRequest, format)
	}
	id, cp, err := e.resolveCheckpoint(task, ref)
	if err != nil {
		return nil, err
	}
	if err := requireMatches(e.db, filter, "the checkpoint", cp.Root); err != nil {
		return nil, err
	}
	a := &archiver{ctx: ctx, e: e, src: e.save.TreeSource(nil), blobs: e.blobs.ReadSession(), w: aw, filter: filter,
		at: cp.Time, res: &ExportResult{Checkpoint: ID(id)}}
	if err := a.dir("", cp.Root); err != nil {
		return nil, err
	}
	// Blobs a pull left on a remote come in one coalesced fetch.
	if _, err := e.fetchBlobs(ctx, a.blobIDs, nil); err != nil {
		return nil, err
	}
	for _, it := range a.items {
		if err := a.write(it); err != nil {
			return nil, err
		}
	}
	return a.res, aw.Close()
}

// archiveWriter is the one thing tar and zip differ in: how an entry is
// framed.
type archiveWriter interface {
	add(name string, kind objects.Kind, mode fs.FileMode, at time.Time, body []byte) error
	Close() error
}

// archiver walks a checkpoint's tree into a list of entries, depth first
// in name order, entering only directories the filter overlaps, then
// writes them.
type archiver struct {
	ctx   context.Context
	e     *Engine
	src   diffview.TreeSource
	blobs interface {
		Get(objects.ID) ([]byte, error)
	}
	w      archiveWriter
	filter diffview.PathFilter
	at     time.Time
	res    *ExportResult

	items   []archiveItem
	blobIDs []objects.ID
}

// archiveItem is one entry of the archive, at its path.
type archiveItem struct {
	path string
	ent  objects.Entry
}

func (a *archiver) dir(rel string, id objects.ID) error {
	if err := a.ctx.Err(); err != nil {
		return err
	}
	t, err := a.src.Tree(id)
	if err != nil {
		return err
	}
	for _, ent := range t.Entries {
		p := path.Join(rel, ent.Name)
		if ent.Kind == objects.KindDir {
			if !a.filter.Overlaps(p) {
				continue
			}
			a.items = append(a.items, archiveItem{p, ent})
			if err := a.dir(p, ent.ID); err != nil {
				return err
			}
			continue
		}
		if a.filter.Covers(p) {
			a.items = append(a.items, archiveItem{p, ent})
			a.blobIDs = append(a.blobIDs, ent.ID)
		}
	}
	return nil
}

// write adds one entry, reading a file's or symlink's content.
func (a *archiver) write(it archiveItem) error {
	var body []byte
	if it.ent.Kind != objects.KindDir {
		var err error
		if body, err = a.blobs.Get(it.ent.ID); err != nil {
			return err
		}
		a.res.Written = append(a.res.Written, it.path)
	}
	return a.w.add(it.path, it.ent.Kind, fs.FileMode(it.ent.Mode), a.at, body)
}

type tarArchive struct{ *tar.Writer }

func (t tarArchive) add(name string, kind objects.Kind, mode fs.FileMode, at time.Time, body []byte) error {
	h := &tar.Header{Name: name, Mode: int64(mode), ModTime: at, Format: tar.FormatPAX}
	switch kind {
	case objects.KindDir:
		h.Typeflag, h.Name = tar.TypeDir, name+"/"
	case objects.KindSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, string(body)
	default:
		h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
	}
	if err := t.WriteHeader(h); err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	if kind != objects.KindFile {
		return nil
	}
	_, err := t.Write(body)
	return err
}

type zipArchive struct{ *zip.Writer }

func (z zipArchive) add(name string, kind objects.Kind, mode fs.FileMode, at time.Time, body []byte) error {
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: at}
	switch kind {
	case objects.KindDir:
		h.Name, h.Method = name+"/", zip.Store
		mode |= fs.ModeDir
	case objects.KindSymlink:
		mode |= fs.ModeSymlink
	}
	h.SetMode(mode)
	fw, err := z.CreateHeader(h)
	if err != nil {
		return fmt.Errorf("archive %s: %w", name, err)
	}
	_, err = fw.Write(body)
	return err
}
