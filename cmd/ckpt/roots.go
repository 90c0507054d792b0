package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

// workspaceFlag is -C: given once, the workspace directory; given more
// than once, the roots of a multi-root workspace (one store and one
// checkpoint over all of them, each root under its directory's name).
type workspaceFlag struct{ a *app }

func (f workspaceFlag) String() string {
	if len(f.a.workspaces) == 0 {
		return "."
	}
	return strings.Join(f.a.workspaces, ",")
}

func (f workspaceFlag) Set(dir string) error {
	if len(f.a.workspaces) == 0 {
		f.a.workspace = dir
	}
	f.a.workspaces = append(f.a.workspaces, dir)
	return nil
}

func (f workspaceFlag) Type() string { return "dir" }

// workspaceDirs are the directories -C names ("." when none).
func (a *app) workspaceDirs() []string {
	if len(a.workspaces) == 0 {
		return []string{a.workspace}
	}
	return a.workspaces
}

// roots are the roots of the multi-root workspace -C names; nil for one
// directory.
func (a *app) roots() []engine.Root {
	if len(a.workspaces) < 2 {
		return nil
	}
	roots := make([]engine.Root, len(a.workspaces))
	for i, dir := range a.workspaces {
		roots[i] = engine.Root{Dir: dir}
	}
	return roots
}

// defaultStore is the store of the -C workspace when --store is not given.
func (a *app) defaultStore() (string, error) {
	if roots := a.roots(); roots != nil {
		return engine.DefaultRootsStoreDir(roots)
	}
	return engine.DefaultStoreDir(a.workspace)
}

// openWorkspace opens the store of the -C workspace with opts.
func (a *app) openWorkspace(ctx context.Context, opts engine.Options) (*engine.Engine, error) {
	if roots := a.roots(); roots != nil {
		opts.Roots = roots
		return engine.Open(ctx, "", opts)
	}
	return engine.Open(ctx, a.workspace, opts)
}

// workspaceIdentity is what an Engine of the -C workspace returns as its
// Workspace, for a server to compare with its own; the directories are
// resolved from cwd.
func (a *app) workspaceIdentity(cwd string) (string, error) {
	for i, dir := range a.workspaces {
		if !filepath.IsAbs(dir) {
			a.workspaces[i] = filepath.Join(cwd, dir)
		}
	}
	if !filepath.IsAbs(a.workspace) {
		a.workspace = filepath.Join(cwd, a.workspace)
	}
	if err := a.checkGlobalFlags(); err != nil {
		return "", err
	}
	if roots := a.roots(); roots != nil {
		return engine.RootsWorkspace(roots)
	}
	ws, err := filepath.EvalSymlinks(a.workspace)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", a.workspace, err)
	}
	return ws, nil
}

// addRootFlag adds --root, the root filter of a multi-root workspace.
func addRootFlag(cmd *cobra.Command, roots *[]string, what string) {
	cmd.Flags().StringArrayVar(roots, "root", nil, what+" only this root of a multi-root workspace (repeatable)")
}

// rootPaths turns a root filter into the paths that select those roots
// (a root's files are under its name), refusing names that are not roots
// of e's workspace.
func rootPaths(e *engine.Engine, roots []string) ([]string, error) {
	var names []string
	for _, r := range e.Roots() {
		names = append(names, r.Name)
	}
	for _, r := range roots {
		if !slices.Contains(names, r) {
			if names == nil {
				return nil, protocol.UsageError(fmt.Sprintf("--root %s: the workspace has a single root (give -C more than once for several)", r))
			}
			return nil, protocol.UsageError(fmt.Sprintf("--root %s: not a root of this workspace (roots: %s)", r, strings.Join(names, ", ")))
		}
	}
	return roots, nil
}

// withRoots adds the paths of the root filter to paths.
func withRoots(e *engine.Engine, roots, paths []string) ([]string, error) {
	if len(roots) == 0 {
		return paths, nil
	}
	rp, err := rootPaths(e, roots)
	return append(rp, paths...), err
}
