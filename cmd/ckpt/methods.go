package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ckpt/ckpt/engine"
)

// method is one operation a host can call over `ckpt serve` (by name) or
// `ckpt mcp` (as the tool "ckpt_"+name). Results have the same JSON shapes
// as the CLI's --json output.
type method struct {
	name   string
	doc    string
	schema string // JSON Schema of the params object
	call   func(ctx context.Context, a *app, e *engine.Engine, params json.RawMessage) (any, error)
}

// decodeParams decodes a params object strictly: unknown fields are usage errors.
func decodeParams[T any](raw json.RawMessage) (T, error) {
	var p T
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return p, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, usageError{fmt.Sprintf("invalid params: %v", err)}
	}
	return p, nil
}

// taskOr returns task, or the session's --task when empty.
func (a *app) taskOr(task string) string {
	if task == "" {
		return a.task
	}
	return task
}

const taskSchema = `"task":{"type":"string","description":"task (chain of checkpoints); default: the session's --task"}`

// methods lists every callable operation.
var methods = []method{
	{
		name: "save", doc: "Save a checkpoint of the workspace. With nothing changed and allow_empty unset, nothing is created and the head is returned with created=false.",
		schema: `{"type":"object","properties":{` + taskSchema + `,"message":{"type":"string"},"allow_empty":{"type":"boolean"},"meta":{"type":"object","additionalProperties":{"type":"string"}},"state":{"type":"string","description":"the host's state blob (e.g. its conversation) to attach"}},"additionalProperties":false}`,
		call: func(ctx context.Context, a *app, e *engine.Engine, raw json.RawMessage) (any, error) {
			p, err := decodeParams[struct {
				Task       string            `json:"task"`
				Message    string            `json:"message"`
				AllowEmpty bool              `json:"allow_empty"`
				Meta       map[string]string `json:"meta"`
				State      *string           `json:"state"`
			}](raw)
			if err != nil {
				return nil, err
			}
			opts := engine.SaveOptions{Task: a.taskOr(p.Task), Message: p.Message, AllowEmpty: p.AllowEmpty, Meta: p.Meta}
			if p.State != nil {
				opts.State = strings.NewReader(*p.State)
			}
			res, err := e.Save(ctx, opts)
			if err != nil {
				return nil, err
			}
			return saveView(res), nil
		},
	},
	{
		name: "list", doc: "List the task's checkpoints, oldest first, with the head marked.",
		schema: `{"type":"object","properties":{` + taskSchema + `},"additionalProperties":false}`,
		call: func(ctx context.Context, a *app, e *engine.Engine, raw json.RawMessage) (any, error) {
			p, err := decodeParams[struct {
				Task string `json:"task"`
			}](raw)
			if err != nil {
				return nil, err
			}
			log, err := e.List(ctx, a.taskOr(p.Task))
			if err != nil {
				return nil, err
			}
			return logView(log), nil
		},
	},
	{
		name: "diff", doc: "Changes between two checkpoints, or a checkpoint and the live workspace, with text contents. Refs: id, unique hex prefix, HEAD, HEAD~N, @N, workspace. mode (checkpoint, from-init, to-current, full) picks a range around ref instead of from/to.",
		schema: `{"type":"object","properties":{` + taskSchema + `,"from":{"type":"string","description":"default HEAD"},"to":{"type":"string","description":"default workspace"},"mode":{"type":"string","enum":["checkpoint","from-init","to-current","full"]},"ref":{"type":"string"},"paths":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`,
		call: func(ctx context.Context, a *app, e *engine.Engine, raw json.RawMessage) (any, error) {
			p, err := decodeParams[struct {
				Task  string   `json:"task"`
				From  string   `json:"from"`
				To    string   `json:"to"`
				Mode  string   `json:"mode"`
				Ref   string   `json:"ref"`
				Paths []string `json:"paths"`
			}](raw)
			if err != nil {
				return nil, err
			}
			if p.Mode != "" {
				p.From, p.To = p.Ref, ""
			} else if p.From == "" {
				p.From = "HEAD"
			}
			opts := engine.DiffOptions{Task: a.taskOr(p.Task), Paths: p.Paths, Mode: engine.DiffMode(p.Mode)}
			res, err := e.Diff(ctx, p.From, p.To, opts)
			if err != nil {
				return nil, err
			}
			return diffView(res, engine.DiffFormat{})
		},
	},
	{
		name: "restore", doc: "Rewind the workspace files (only=workspace, default), the state blob (only=state) or both to a checkpoint. A backup checkpoint of the current state is saved first unless no_backup; files no checkpoint captured are never touched (reported as conflicts unless force).",
		schema: `{"type":"object","properties":{` + taskSchema + `,"ref":{"type":"string"},"only":{"type":"string","enum":["workspace","state","both"]},"paths":{"type":"array","items":{"type":"string"}},"dry_run":{"type":"boolean"},"no_backup":{"type":"boolean"},"force":{"type":"boolean"}},"required":["ref"],"additionalProperties":false}`,
		call: func(ctx context.Context, a *app, e *engine.Engine, raw json.RawMessage) (any, error) {
			p, err := decodeParams[struct {
				Task     string   `json:"task"`
				Ref      string   `json:"ref"`
				Only     string   `json:"only"`
				Paths    []string `json:"paths"`
				DryRun   bool     `json:"dry_run"`
				NoBackup bool     `json:"no_backup"`
				Force    bool     `json:"force"`
			}](raw)
			if err != nil {
				return nil, err
			}
			if p.Ref == "" {
				return nil, usageError{"invalid params: ref is required"}
			}
			opts := engine.RestoreOptions{Task: a.taskOr(p.Task), Only: engine.Only(p.Only), Paths: p.Paths,
				DryRun: p.DryRun, NoBackup: p.NoBackup, Force: p.Force}
			res, err := e.Restore(ctx, p.Ref, opts)
			if err != nil {
				return nil, err
			}
			out := struct {
				restoreJSON
				StateContent *string `json:"state_content,omitempty"`
			}{restoreJSON: restoreView(res, p.DryRun)}
			if opts.Only == engine.OnlyState || opts.Only == engine.OnlyBoth {
				state, err := e.ReadState(ctx, res.State)
				if err != nil {
					return nil, err
				}
				text := string(state)
				out.StateContent = &text
			}
			return out, nil
		},
	},
	{
		name: "tasks", doc: "List the store's tasks with their checkpoint counts and heads.",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`,
		call: func(ctx context.Context, _ *app, e *engine.Engine, raw json.RawMessage) (any, error) {
			if _, err := decodeParams[struct{}](raw); err != nil {
				return nil, err
			}
			tasks, err := e.Tasks(ctx)
			if err != nil {
				return nil, err
			}
			return tasksView(tasks), nil
		},
	},
}

// lookupMethod finds a method by name.
func lookupMethod(name string) (method, bool) {
	for _, m := range methods {
		if m.name == name {
			return m, true
		}
	}
	return method{}, false
}
