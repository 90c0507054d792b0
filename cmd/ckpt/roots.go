package main

import (
	"context"
	"fmt"
	"os"
	"path"
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

// withRoots turns the paths a command was given into the workspace's
// (workspacePath) and adds the paths of the root filter to them.
func withRoots(e *engine.Engine, roots, paths []string) ([]string, error) {
	var err error
	if paths, err = workspacePaths(e, paths); err != nil || len(roots) == 0 {
		return paths, err
	}
	rp, err := rootPaths(e, roots)
	return append(rp, paths...), err
}

// workspacePaths is workspacePath of each of paths.
func workspacePaths(e *engine.Engine, paths []string) ([]string, error) {
	if paths == nil {
		return nil, nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		var err error
		if out[i], err = workspacePath(e, p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// workspacePath is the path the engine takes for p, a path given on the
// command line (restore, diff, log, export, ls, cat): the same rule for
// every command. A relative p is relative to the workspace, the -C
// directory (as git -C makes paths relative to its directory), under
// the root's name in a multi-root workspace, and is returned as it is. An
// absolute p inside the workspace becomes relative to it: to the root it
// lies in, under that root's name, in a multi-root workspace; through a
// symlink to the workspace or a directory in it too. An absolute p outside
// the workspace is a usage error naming it.
func workspacePath(e *engine.Engine, p string) (string, error) {
	clean := p
	switch {
	case filepath.IsAbs(p):
		clean = filepath.Clean(p)
	case p != "" && os.IsPathSeparator(p[0]): // Windows: \dir, on the current drive
		var err error
		if clean, err = filepath.Abs(p); err != nil {
			return "", protocol.UsageError(fmt.Sprintf("path %q: %v", p, err))
		}
	default:
		return p, nil
	}
	// As given, then with the symlinks of the directories above its last
	// element resolved (the workspace's directories are canonical): a
	// symlink in the workspace, which a checkpoint holds as a symlink, is
	// the workspace's path even where it leads out. Only a last element
	// outside the workspace is followed: a symlink to the workspace, or
	// into it.
	if rel, ok := inWorkspace(e, clean); ok {
		return rel, nil
	}
	if real, err := resolveAbove(clean); err == nil {
		if rel, ok := inWorkspace(e, real); ok {
			return rel, nil
		}
	}
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		if rel, ok := inWorkspace(e, real); ok {
			return rel, nil
		}
	}
	return "", protocol.UsageError(fmt.Sprintf("path %q is outside the workspace; give a path inside it, absolute or relative to it", p))
}

// inWorkspace returns the workspace path of abs, a clean absolute path,
// and whether it lies in the workspace: "." for a single root itself, a
// root's name for a root of a multi-root workspace.
func inWorkspace(e *engine.Engine, abs string) (string, bool) {
	roots := e.Roots()
	if roots == nil {
		return relativeTo(e.Workspace(), abs)
	}
	for _, r := range roots {
		if rel, ok := relativeTo(r.Dir, abs); ok {
			return path.Join(r.Name, rel), true
		}
	}
	return "", false
}

// relativeTo returns abs relative to dir, slash-separated, and whether it
// lies in dir ("." for dir itself).
func relativeTo(dir, abs string) (string, bool) {
	rel, err := filepath.Rel(dir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// resolveAbove resolves the symlinks of abs's directories, the longest of
// them that exists (a file to restore may be gone, and the directories
// it was in), and keeps the rest, its last element among it, as it is.
func resolveAbove(abs string) (string, error) {
	dir, rest := filepath.Dir(abs), filepath.Base(abs)
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
