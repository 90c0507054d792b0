package protocol

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/background"
	"github.com/ckpt/ckpt/internal/lossless"
)

// The params of the host methods, named like the CLI's flags. Fields with
// omitempty are optional (the MCP schema marks the others required).
type (
	saveParams struct {
		Task        string            `json:"task,omitempty" jsonschema:"task (chain of checkpoints); default: the session's --task"`
		Message     string            `json:"message,omitempty"`
		AllowEmpty  bool              `json:"allow_empty,omitempty" jsonschema:"create a checkpoint even when nothing changed"`
		Meta        map[string]string `json:"meta,omitempty" jsonschema:"host metadata, stored verbatim"`
		State       *string           `json:"state,omitempty" jsonschema:"the host's state blob (e.g. its conversation) as text"`
		StateBase64 *string           `json:"state_base64,omitempty" jsonschema:"the host's state blob as base64, for bytes that are not UTF-8"`
		Roots       []string          `json:"roots,omitempty" jsonschema:"in a multi-root workspace, the roots to read (default all); the others keep the head's files"`
	}
	taskParams struct {
		Task string `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
	}
	refParams struct {
		Task string `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Ref  string `json:"ref" jsonschema:"id, unique hex prefix, HEAD, HEAD~N or @N"`
	}
	lsParams struct {
		Task       string  `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Ref        string  `json:"ref" jsonschema:"id, unique hex prefix, HEAD, HEAD~N or @N"`
		Path       string  `json:"path,omitempty" jsonschema:"directory, default the root"`
		PathBase64 *string `json:"path_base64,omitempty" jsonschema:"the path's bytes in standard base64, for a name that is not valid UTF-8 (a result's path_base64); instead of path"`
	}
	catParams struct {
		Task string `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Ref  string `json:"ref" jsonschema:"id, unique hex prefix, HEAD, HEAD~N or @N"`
		// Path is required unless PathBase64 is given: the schema leaves
		// it optional.
		Path       string  `json:"path,omitempty" jsonschema:"workspace-relative file path (or path_base64)"`
		PathBase64 *string `json:"path_base64,omitempty" jsonschema:"the path's bytes in standard base64, for a name that is not valid UTF-8 (a result's path_base64); instead of path"`
	}
	diffParams struct {
		Task        string   `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		From        string   `json:"from,omitempty" jsonschema:"default HEAD"`
		To          string   `json:"to,omitempty" jsonschema:"default workspace"`
		Mode        string   `json:"mode,omitempty" jsonschema:"checkpoint, from-init, to-current or full: a range around ref instead of from/to"`
		Ref         string   `json:"ref,omitempty" jsonschema:"the checkpoint mode ranges around"`
		Paths       []string `json:"paths,omitempty" jsonschema:"limit to these workspace-relative paths (in a multi-root workspace a root's name selects that root); one that names nothing is an error"`
		PathsBase64 []string `json:"paths_base64,omitempty" jsonschema:"more paths, each as its bytes in standard base64, for names that are not valid UTF-8 (a result's path_base64)"`
	}
	restoreParams struct {
		Task        string   `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Ref         string   `json:"ref" jsonschema:"id, unique hex prefix, HEAD, HEAD~N or @N"`
		Only        string   `json:"only,omitempty" jsonschema:"workspace (default), state or both"`
		Paths       []string `json:"paths,omitempty" jsonschema:"restore only these workspace-relative paths (in a multi-root workspace a root's name selects that root); one that names nothing is an error"`
		PathsBase64 []string `json:"paths_base64,omitempty" jsonschema:"more paths, each as its bytes in standard base64, for names that are not valid UTF-8 (a result's path_base64)"`
		DryRun      bool     `json:"dry_run,omitempty" jsonschema:"report the plan, change nothing"`
		NoBackup    bool     `json:"no_backup,omitempty" jsonschema:"do not save a backup checkpoint first"`
		Force       bool     `json:"force,omitempty" jsonschema:"overwrite uncaptured files that stand in the way"`
	}
	noParams   struct{}
	dropParams struct {
		Task string `json:"task" jsonschema:"the task to drop"`
	}
	gcParams struct {
		KeepLast *int    `json:"keep_last,omitempty" jsonschema:"keep at most N checkpoints per task besides its head (0: no limit; remembered)"`
		MaxAge   *string `json:"max_age,omitempty" jsonschema:"drop checkpoints older than this Go duration, e.g. 720h (remembered)"`
		MaxSize  *string `json:"max_size,omitempty" jsonschema:"drop the oldest checkpoints until the store fits, e.g. 2GiB (remembered)"`
	}
	verifyParams struct {
		Quick bool `json:"quick,omitempty" jsonschema:"check structure only, without hashing content"`
	}
)

// pathParam is the path a method was given: path, or the name whose bytes
// pathBase64 holds (not both).
func pathParam(path string, pathBase64 *string) (string, error) {
	switch {
	case pathBase64 == nil:
		return path, nil
	case path != "":
		return "", UsageError("invalid params: give path or path_base64, not both")
	}
	p, err := lossless.Decode("path_base64", *pathBase64)
	if err != nil {
		return "", UsageError("invalid params: " + err.Error())
	}
	return p, nil
}

// pathsParam is the paths a method was given: paths and the names whose
// bytes pathsBase64 holds, together.
func pathsParam(paths, pathsBase64 []string) ([]string, error) {
	if pathsBase64 == nil {
		return paths, nil
	}
	raw, err := lossless.DecodeList("paths_base64", pathsBase64)
	if err != nil {
		return nil, UsageError("invalid params: " + err.Error())
	}
	return append(slices.Clip(paths), raw...), nil
}

// required fails with a usage error naming the first empty field.
func required(fields ...string) error {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i+1] == "" {
			return UsageError(fmt.Sprintf("invalid params: %s is required", fields[i]))
		}
	}
	return nil
}

func (h *host) save(ctx context.Context, p saveParams) (SaveJSON, error) {
	opts := engine.SaveOptions{Task: h.task(p.Task), Message: p.Message, AllowEmpty: p.AllowEmpty, Meta: p.Meta, Roots: p.Roots, Capture: h.capture.Load()}
	state, err := textOrBase64("state", p.State, p.StateBase64)
	if err != nil {
		return SaveJSON{}, err
	}
	if state != nil {
		opts.State = bytes.NewReader(state)
	}
	defer h.scans.add(ctx)()
	start := time.Now()
	res, err := h.e.Save(ctx, opts)
	if err != nil {
		return SaveJSON{}, h.events.fail(opts.Task, err)
	}
	h.events.settled(ctx, res.Settled)
	h.events.saved(ctx, res, time.Since(start))
	return SaveView(res), nil
}

func (h *host) list(ctx context.Context, p taskParams) (LogJSON, error) {
	log, err := h.e.List(ctx, h.task(p.Task))
	if err != nil {
		return LogJSON{}, err
	}
	return LogView(log), nil
}

func (h *host) show(ctx context.Context, p refParams) (CheckpointJSON, error) {
	if err := required("ref", p.Ref); err != nil {
		return CheckpointJSON{}, err
	}
	c, err := h.e.Show(ctx, h.task(p.Task), p.Ref)
	if err != nil {
		return CheckpointJSON{}, err
	}
	return CheckpointView(c), nil
}

func (h *host) ls(ctx context.Context, p lsParams) (LsJSON, error) {
	if err := required("ref", p.Ref); err != nil {
		return LsJSON{}, err
	}
	dir, err := pathParam(p.Path, p.PathBase64)
	if err != nil {
		return LsJSON{}, err
	}
	entries, err := h.e.Ls(ctx, h.task(p.Task), p.Ref, dir)
	if err != nil {
		return LsJSON{}, err
	}
	return LsView(entries), nil
}

// CatJSON is a file's bytes: content when valid UTF-8, else
// content_base64 (the cat method's result, and cat --json's).
type CatJSON struct {
	Path          string  `json:"path"`
	PathBase64    *string `json:"path_base64,omitempty"` // path's bytes when it is not valid UTF-8 (package lossless)
	Size          int64   `json:"size"`
	Content       *string `json:"content,omitempty"`
	ContentBase64 *string `json:"content_base64,omitempty"`
}

func (h *host) cat(ctx context.Context, p catParams) (CatJSON, error) {
	file, err := pathParam(p.Path, p.PathBase64)
	if err != nil {
		return CatJSON{}, err
	}
	if err := required("ref", p.Ref, "path", file); err != nil {
		return CatJSON{}, err
	}
	rc, size, err := h.e.Cat(ctx, h.task(p.Task), p.Ref, file)
	if err != nil {
		return CatJSON{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return CatJSON{}, fmt.Errorf("read %q: %w", file, err)
	}
	return CatView(file, size, b), nil
}

// CatView is the CatJSON of file, of size bytes, holding b.
func CatView(file string, size int64, b []byte) CatJSON {
	out := CatJSON{Path: file, PathBase64: lossless.Base64(file), Size: size}
	out.Content, out.ContentBase64 = splitText(b)
	return out
}

func (h *host) tasks(ctx context.Context, _ noParams) (TasksJSON, error) {
	tasks, err := h.e.Tasks(ctx)
	if err != nil {
		return TasksJSON{}, err
	}
	return TasksJSON{Tasks: TasksView(tasks)["tasks"]}, nil
}

// TasksJSON is the tasks method's result (the CLI's tasks --json shape).
type TasksJSON struct {
	Tasks []TaskJSON `json:"tasks"`
}

func (h *host) drop(ctx context.Context, p dropParams) (DropJSON, error) {
	if err := required("task", p.Task); err != nil {
		return DropJSON{}, err
	}
	res, err := h.e.Drop(ctx, p.Task)
	if err != nil {
		return DropJSON{}, err
	}
	return DropView(res), nil
}

func (h *host) stats(ctx context.Context, _ noParams) (StoreStatsJSON, error) {
	st, err := h.e.Stats(ctx)
	if err != nil {
		return StoreStatsJSON{}, err
	}
	pid, err := background.Running(h.e.StoreDir())
	if err != nil {
		return StoreStatsJSON{}, err
	}
	return StoreStatsView(st, WatcherView(h.e.WatchStats()), pid), nil
}

// splitText returns b as text when it is valid UTF-8, else as base64.
func splitText(b []byte) (text, b64 *string) {
	if utf8.Valid(b) {
		s := string(b)
		return &s, nil
	}
	s := base64.StdEncoding.EncodeToString(b)
	return nil, &s
}

// textOrBase64 decodes a blob given as text or as base64 (not both); nil
// when neither is given.
func textOrBase64(name string, text, b64 *string) ([]byte, error) {
	switch {
	case text != nil && b64 != nil:
		return nil, UsageError(fmt.Sprintf("invalid params: give %s or %s_base64, not both", name, name))
	case text != nil:
		return []byte(*text), nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, UsageError(fmt.Sprintf("invalid params: %s_base64: %v", name, err))
		}
		return b, nil
	}
	return nil, nil
}
