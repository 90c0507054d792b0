package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/engine"
)

func (a *app) exportCommand() *cobra.Command {
	var tarOut, zipOut string
	var roots []string
	cmd := &cobra.Command{
		Use:   "export REF [DIR] [-- PATH...]",
		Short: "Write a checkpoint's files into DIR (or a tar or zip archive), leaving the workspace alone",
		Long: "Writes the tree of REF, or only the paths after --, with modes and symlinks into DIR, which\n" +
			"must not exist or be empty; --tar FILE (- for stdout) or --zip FILE write an archive instead.\n" +
			"The workspace, the head and the task are never touched.",
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, paths := pathsAfterDash(cmd, args)
			archive, out, err := exportTarget(pos, tarOut, zipOut)
			if err != nil {
				return err
			}
			return a.withEngine(cmd, func(e *engine.Engine) error {
				paths, err := withRoots(e, roots, paths)
				if err != nil {
					return err
				}
				opts := engine.ExportOptions{Task: a.task, Paths: paths}
				if archive == "" {
					res, err := e.Export(cmd.Context(), pos[0], a.localPath(out), opts)
					if err != nil {
						return err
					}
					return a.printExport(res)
				}
				return a.writeArchive(cmd, e, pos[0], archive, out, opts)
			})
		},
	}
	cmd.Flags().StringVar(&tarOut, "tar", "", "write a tar archive to FILE (- for stdout)")
	addRootFlag(cmd, &roots, "export")
	cmd.Flags().StringVar(&zipOut, "zip", "", "write a zip archive to FILE")
	return cmd
}

// exportTarget checks export's arguments: REF and DIR, or REF and one
// archive flag.
func exportTarget(pos []string, tarOut, zipOut string) (engine.ArchiveFormat, string, error) {
	switch {
	case len(pos) == 0:
		return "", "", protocol.UsageError("export needs a REF")
	case tarOut != "" && zipOut != "":
		return "", "", protocol.UsageError("--tar and --zip exclude each other")
	case tarOut != "" || zipOut != "":
		if len(pos) != 1 {
			return "", "", protocol.UsageError("export with --tar or --zip takes no DIR")
		}
		if tarOut != "" {
			return engine.ArchiveTar, tarOut, nil
		}
		return engine.ArchiveZip, zipOut, nil
	case len(pos) != 2:
		return "", "", protocol.UsageError("export takes REF and DIR (or --tar/--zip FILE)")
	}
	return "", pos[1], nil
}

// writeArchive writes the archive to stdout ("-") or a new file, removed
// again when the export fails.
func (a *app) writeArchive(cmd *cobra.Command, e *engine.Engine, ref string, format engine.ArchiveFormat, out string, opts engine.ExportOptions) error {
	if out == "-" {
		if a.json {
			return protocol.UsageError("--json cannot share stdout with an archive; give a FILE")
		}
		_, err := e.WriteArchive(cmd.Context(), ref, a.stdout, format, opts)
		return err
	}
	name := a.localPath(out)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return protocol.UsageError(fmt.Sprintf("archive file: %v", err))
	}
	res, err := e.WriteArchive(cmd.Context(), ref, f, format, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	res.Dir = name
	return a.printExport(res)
}

func (a *app) printExport(res *engine.ExportResult) error {
	if a.json {
		a.printJSON(protocol.ExportView(res))
		return nil
	}
	if !a.quiet {
		fmt.Fprintf(a.stdout, "exported %s: %d files into %s\n", res.Checkpoint.Short(), len(res.Written), res.Dir)
	}
	for _, c := range res.Conflicts {
		fmt.Fprintf(a.stderr, "ckpt: export left %s alone: %s\n", engine.QuotePath(c.Path), c.Reason)
	}
	return nil
}
