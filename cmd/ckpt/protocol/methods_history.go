package protocol

import (
	"context"
	"io"
	"path/filepath"

	"github.com/ckpt/ckpt/engine"
)

type (
	historyParams struct {
		Task        string   `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		All         bool     `json:"all,omitempty" jsonschema:"search every task"`
		Paths       []string `json:"paths,omitempty" jsonschema:"workspace-relative files or directories; none: the whole workspace; one that names nothing is an error"`
		PathsBase64 []string `json:"paths_base64,omitempty" jsonschema:"more paths, each as its bytes in standard base64, for names that are not valid UTF-8 (a result's path_base64)"`
	}
	exportParams struct {
		Task        string   `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Ref         string   `json:"ref" jsonschema:"id, unique hex prefix, HEAD, HEAD~N or @N"`
		Dir         string   `json:"dir" jsonschema:"absolute path of a directory that does not exist or is empty"`
		Paths       []string `json:"paths,omitempty" jsonschema:"export only these workspace-relative paths; one that names nothing is an error"`
		PathsBase64 []string `json:"paths_base64,omitempty" jsonschema:"more paths, each as its bytes in standard base64, for names that are not valid UTF-8 (a result's path_base64)"`
	}
	bisectParams struct {
		Task string `json:"task,omitempty" jsonschema:"task; default: the session's --task"`
		Run  string `json:"run" jsonschema:"shell command run in each exported checkpoint: exit 0 good, 125 skip, 1-127 bad"`
		Good string `json:"good,omitempty" jsonschema:"a checkpoint without the problem; default the task's first"`
		Bad  string `json:"bad,omitempty" jsonschema:"a checkpoint with the problem; default the head"`
	}
)

func (h *host) history(ctx context.Context, p historyParams) (HistoryJSON, error) {
	paths, err := pathsParam(p.Paths, p.PathsBase64)
	if err != nil {
		return HistoryJSON{}, err
	}
	hist, err := h.e.History(ctx, engine.HistoryOptions{Task: h.task(p.Task), All: p.All, Paths: paths})
	if err != nil {
		return HistoryJSON{}, err
	}
	return HistoryView(hist), nil
}

func (h *host) export(ctx context.Context, p exportParams) (ExportJSON, error) {
	if err := required("ref", p.Ref, "dir", p.Dir); err != nil {
		return ExportJSON{}, err
	}
	if !filepath.IsAbs(p.Dir) {
		return ExportJSON{}, UsageError("invalid params: dir must be an absolute path")
	}
	paths, err := pathsParam(p.Paths, p.PathsBase64)
	if err != nil {
		return ExportJSON{}, err
	}
	res, err := h.e.Export(ctx, p.Ref, p.Dir, engine.ExportOptions{Task: h.task(p.Task), Paths: paths})
	if err != nil {
		return ExportJSON{}, err
	}
	return ExportView(res), nil
}

func (h *host) bisect(ctx context.Context, p bisectParams) (BisectJSON, error) {
	if err := required("run", p.Run); err != nil {
		return BisectJSON{}, err
	}
	res, err := h.e.Bisect(ctx, engine.BisectOptions{Task: h.task(p.Task), Good: p.Good, Bad: p.Bad,
		Test: CommandTest(p.Run, io.Discard, io.Discard)})
	if err != nil {
		return BisectJSON{}, err
	}
	return BisectView(res), nil
}
