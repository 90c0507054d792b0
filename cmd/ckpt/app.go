package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/ckpt/ckpt/cmd/ckpt/protocol"
	"github.com/ckpt/ckpt/cmd/ckpt/server"
	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// version is ckpt's release, reported by --version and to MCP clients.
const version = "0.1.0"

// app holds the global flags and the output streams of one invocation.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	workspace   string   // the first -C (default ".")
	workspaces  []string // every -C: several are the roots of a multi-root workspace
	store       string
	task        string
	json        bool
	quiet       bool
	profile     string
	exclude     []string
	maxFileSize int64
	lockTimeout time.Duration
	// answerBy is when the wait for the store that openEngine began ends
	// for a server found during it (answerDeadline); zero before.
	answerBy time.Time

	// exitCode, when set by a command, overrides success (diff --exit-code).
	exitCode int
	// colour: stdout is a terminal and NO_COLOR is unset.
	colour bool
	// indentJSON indents --json documents for a person reading them on a
	// terminal; elsewhere each is one line, cheaper to write and to parse.
	indentJSON bool
	// progress is the terminal progress line, nil when not drawn.
	progress *progressLine
	// notices are fields the open (or a command settling an interrupted
	// restore itself) added to every JSON document.
	notices protocol.NoticesJSON
	// scans, set by serve and mcp before the open, receives the engine's
	// scan progress.
	scans *protocol.ScanHub
	// storeEvents, set by serve and mcp before the open, receives the
	// engine's store-wide events for every client.
	storeEvents *protocol.StoreEvents
	// background prints the index's background errors (engineOptions).
	background *backgroundNotes
	// capture is what a command a server runs for a client reads of the
	// workspace, from the client's flags (resident.captureFor); nil: the
	// engine's own, as cold.
	capture *engine.Capture
	// readOnlyOpen: openEngine opened the store for reading only, so a
	// pending restore is reported, not settled (noticeRestores).
	readOnlyOpen bool
	// writeErr is the first failure to write a JSON document: the command
	// then exits non-zero even if its work succeeded.
	writeErr error
	// server is the resident side of this invocation: set when a
	// listening server runs the command for a client (see listen.go).
	server *serverContext
	// watch opens the engine with a change watcher (serve and mcp, unless
	// --watch=false).
	watch bool
	// args is the command line, kept to forward it to a server.
	args []string
	// noBackground: the user turned background recompression off
	// (noBackgroundEnv), so first saves compress as they write.
	noBackground bool
	// idle recompresses deferred packs while a resident server (serve,
	// mcp) answers no request; nil elsewhere.
	idle *server.Recompressor
	// pendingAtEnd is the restore the engine held pending when the
	// command failed (withOpened), which an interruption reports.
	pendingAtEnd *engine.Journal
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	tty := isTerminal(stdout)
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, colour: tty && os.Getenv("NO_COLOR") == "",
		indentJSON: tty, store: os.Getenv("CKPT_STORE"), noBackground: os.Getenv(noBackgroundEnv) != ""}
	ctx, in := watchSignals(context.Background())
	return a.execute(ctx, args, in.stop, in.signalled)
}

// execute runs one command line; stop ends the signal watch and signalled
// names the signal that cancelled ctx, if any.
func (a *app) execute(ctx context.Context, args []string, stop func(), signalled func() syscall.Signal) int {
	a.args = args
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	stop()
	if a.background != nil {
		a.background.flush(err)
	}
	var usage protocol.UsageError
	var remote remoteExit
	switch {
	case errors.As(err, &remote): // a server ran it and printed everything
		return remote.code
	case err == nil && a.writeErr != nil:
		fmt.Fprintf(a.stderr, "ckpt: %v\n", a.writeErr)
		return protocol.ExitError
	case err == nil:
		return a.exitCode
	case signalled() != 0:
		ie := interruptedError{sig: signalled(), pending: a.leftPending(err)}
		return a.report(ie.exitCode(), ie)
	case a.server != nil && errors.Is(context.Cause(ctx), server.ErrStopped):
		return a.fail(a.server.stopped())
	case cmd == root && !errors.As(err, &usage):
		// The root command runs nothing: its errors (an unknown
		// subcommand) are usage errors, found before any flag was parsed.
		a.parseGlobalFlags(root, args)
		err = protocol.UsageError(err.Error())
	}
	return a.fail(err)
}

// parseGlobalFlags parses the global flags (--json, -q) out of args, skipping
// everything else, so that an error found before cobra parsed them is still
// reported in the form asked for.
func (a *app) parseGlobalFlags(root *cobra.Command, args []string) {
	fs := pflag.NewFlagSet("global", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.SetOutput(io.Discard)
	fs.AddFlagSet(root.PersistentFlags())
	_ = fs.Parse(args)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "ckpt",
		Short: "Checkpoints of a workspace: save, list, diff and restore, without git",
		Long: "ckpt keeps checkpoints of a workspace in a content-addressed store outside it.\n" +
			"Refs: a full id, a unique hex prefix (4+), HEAD, HEAD~N (HEAD~ and HEAD^ mean HEAD~1, as in git),\n" +
			"@N (sequence number in the task), and in diff the word workspace.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	a.workspace, a.workspaces = ".", nil
	f.VarP(workspaceFlag{a}, "workspace", "C", "workspace directory; give it more than once for a multi-root workspace (each root named by its directory's name)")
	f.StringVar(&a.store, "store", a.store, "store directory (env CKPT_STORE; default: the user data directory's ckpt/workspaces/<id>)")
	f.StringVar(&a.task, "task", envOr("CKPT_TASK", engine.DefaultTask), "task (a named chain of checkpoints; env CKPT_TASK)")
	f.BoolVar(&a.json, "json", false, "print one JSON document on stdout (errors too)")
	f.BoolVarP(&a.quiet, "quiet", "q", false, "print nothing on success")
	f.StringVar(&a.profile, "profile", "default", "exclusion profile: default, cline, roo or none")
	f.StringArrayVar(&a.exclude, "exclude", nil, "extra gitignore-style pattern to exclude (repeatable)")
	f.Var(&sizeFlag{&a.maxFileSize}, "max-file-size", "skip files larger than this, e.g. 100MiB (0: 100 MiB; -1: no limit)")
	f.DurationVar(&a.lockTimeout, "lock-timeout", engine.DefaultLockTimeout, "how long to wait for another ckpt process (0: fail at once when it is busy)")
	// --version is spelled out (as git and jj do): cobra would add -v too.
	root.Flags().Bool("version", false, "print ckpt's version")
	// Under --json the version is a JSON document too.
	root.SetVersionTemplate(`{{if eq (.Flag "json").Value.String "true"}}{"version":{{printf "%q" .Version}}}{{else}}ckpt version {{.Version}}{{end}}` + "\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return protocol.UsageError(err.Error()) })
	root.AddCommand(a.saveCommand(), a.listCommand(), a.showCommand(), a.lsCommand(), a.catCommand(),
		a.diffCommand(), a.restoreCommand(), a.tasksCommand(), a.dropCommand(), a.gcCommand(),
		a.verifyCommand(), a.statsCommand(), a.listenFlags(a.serveCommand()), a.mcpCommand(), a.uiCommand(),
		a.remoteCommand(), a.pushCommand(), a.pullCommand(), a.cloneCommand(), a.backgroundCommand(),
		a.logCommand(), a.exportCommand(), a.bisectCommand())
	cmds := root.Commands()
	for _, c := range root.Commands() {
		cmds = append(cmds, c.Commands()...)
	}
	for _, c := range cmds {
		if check := c.Args; check != nil {
			c.Args = func(cmd *cobra.Command, args []string) error {
				if err := check(cmd, args); err != nil {
					return protocol.UsageError(fmt.Sprintf("%s: %v", cmd.Name(), err))
				}
				return nil
			}
		}
	}
	return root
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// residentCommands keep the engine open across requests: an interrupted
// restore is settled by their first writing request, not when they start.
var residentCommands = map[string]bool{"serve": true, "mcp": true}

// selfSettlingCommands settle an interrupted restore themselves: clone
// completes the one an earlier run of it left, fetching from its remote
// while it writes (engine.CloneResult.Resumed).
var selfSettlingCommands = map[string]bool{"clone": true}

// readOnlyCommands open the store read-only: they never write, and so never
// wait for the index compactions a save left due.
var readOnlyCommands = map[string]bool{
	"list": true, "show": true, "ls": true, "cat": true, "diff": true, "log": true, "tasks": true, "verify": true, "stats": true,
}

// readsWhereUnwritable open the store for writing, to keep what they
// fetch from a remote, and for reading only where it cannot be written
// (a read-only mount of a store): what the store holds is exported all the
// same.
var readsWhereUnwritable = map[string]bool{"export": true}

// checkGlobalFlags refuses global flag values that mean nothing, as usage
// errors naming the flag.
func (a *app) checkGlobalFlags() error {
	if a.lockTimeout < 0 {
		return protocol.UsageError(fmt.Sprintf("--lock-timeout %v: want a duration of 0 (fail at once when busy) or more", a.lockTimeout))
	}
	if a.maxFileSize < engine.NoMaxFileSize {
		return protocol.UsageError(fmt.Sprintf("--max-file-size %d: want a byte count, 0 for 100 MiB or -1 for no limit", a.maxFileSize))
	}
	for _, dir := range a.workspaceDirs() {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return protocol.UsageError(fmt.Sprintf("workspace %s does not exist", dir))
		case err != nil:
			return fmt.Errorf("workspace %s: %w", dir, err)
		case !fi.IsDir():
			return protocol.UsageError(fmt.Sprintf("workspace %s is not a directory", dir))
		}
	}
	return nil
}

// open opens the engine for one command and settles or reports an
// interrupted restore (noticeRestores).
func (a *app) open(cmd *cobra.Command) (*engine.Engine, error) {
	e, err := a.openEngine(cmd)
	if err != nil {
		return nil, err
	}
	command := cmd.Name()
	if cmd.HasParent() && cmd.Parent().Name() == "remote" {
		command = "remote " + command
	}
	if err := a.noticeRestores(cmd.Context(), e, command, changesNothing(cmd)); err != nil {
		if a.server == nil {
			e.Close()
		}
		return nil, err
	}
	return e, nil
}

// openEngine opens the command's engine, or returns the server's. Before
// it opens the store it looks for the store's server: a command that
// serves the store (serve, mcp) ends with serverFound when one listens,
// any other is run by it (forward). While another process holds the
// store's lock, it waits up to --lock-timeout in slices of
// serverLookSlice and looks again between them: the holder may be a
// server still opening the store, which listens once it has (and never
// lets go of the lock); then it fails busy naming the holder. A server
// found meanwhile has until the end of the same wait (at least
// minServerAnswer from its start) to accept the command or attach
// (answerDeadline).
func (a *app) openEngine(cmd *cobra.Command) (*engine.Engine, error) {
	if a.server != nil {
		return a.server.engineFor(a, cmd)
	}
	if err := a.checkGlobalFlags(); err != nil {
		return nil, err
	}
	opts := a.engineOptions(cmd.Name(), readOnlyCommands[cmd.Name()])
	opts.Watch = a.watch
	if a.scans != nil { // serve and mcp: scan progress goes to the requests that asked
		opts.OnProgress = a.scans.Send
	} else if a.progress = a.newProgressLine(); a.progress != nil {
		opts.OnProgress = a.progress.update
		a.stdout = clearingWriter{a.stdout, a.progress}
	}
	findServer := a.forward // a live server of the store runs the command
	if residentCommands[cmd.Name()] {
		findServer = a.dialServer // a live server of the store is attached to
	}
	start := time.Now()
	deadline := start.Add(a.lockTimeout)
	a.answerBy = start.Add(a.serverAnswerWait()) // for a server found meanwhile (answerDeadline)
	for {
		if err := findServer(cmd); err != nil {
			return nil, err
		}
		opts.LockTimeout = min(serverLookSlice, max(0, time.Until(deadline)))
		e, err := a.openWorkspace(cmd.Context(), opts)
		if errors.Is(err, engine.ErrNotWritable) && readsWhereUnwritable[cmd.Name()] && !opts.ReadOnly {
			opts.ReadOnly = true
			e, err = a.openWorkspace(cmd.Context(), opts)
		}
		a.readOnlyOpen = opts.ReadOnly
		if err == nil || !errors.Is(err, engine.ErrBusy) || !time.Now().Before(deadline) {
			return e, err
		}
	}
}

// serverLookSlice bounds one wait for the store's lock in openEngine, so
// that a server that comes to listen for the store meanwhile is found.
const serverLookSlice = 100 * time.Millisecond

// engineOptions are the options a command opens the store with: the global
// flags, and background errors of the index printed on stderr.
func (a *app) engineOptions(command string, readOnly bool) engine.Options {
	if a.background == nil {
		a.background = newBackgroundNotes(a.stderr, command)
	}
	notes := a.background
	opts := engine.Options{
		StoreDir:    a.store,
		Profile:     a.profile,
		Exclude:     a.exclude,
		MaxFileSize: a.maxFileSize,
		LockTimeout: a.lockTimeout, // 0 fails at once in both
		Command:     "ckpt " + command,
		ReadOnly:    readOnly,
		OpenRemote:  protocol.OpenRemote,
		// A first save stores raw and is compressed afterwards, while a
		// server idles or in a background process (background.go).
		DeferCompression: a.deferCompression(command),
		OnEvent: func(ev engine.Event) {
			// Operations return their own errors; background ones arrive only here.
			var bg *engine.BackgroundError
			if ev.Type == engine.EventError && errors.As(ev.Err, &bg) {
				notes.note(bg)
			}
			if a.storeEvents != nil {
				a.storeEvents.Send(ev)
			}
		},
	}
	if testOptions != nil {
		testOptions(&opts)
	}
	return opts
}

// testOptions, set only in builds with the ckpttest tag (the CLI's tests),
// adjusts every engine's options (testpause_ckpttest.go).
var testOptions func(*engine.Options)

// noticeRestores settles an interrupted restore before a command that may
// write (the engine would settle it at its first write anyway; doing it
// here reports it), or reports one a command that only reads finds
// pending (also a dry run, and an export that opened the store for reading
// only, which it could not write). The remote commands change only the store's records of its
// remotes, not the workspace or a head, so they report one too: removing
// a remote whose damage keeps a restore pending is a way on. Text goes to stderr (unless -q); under --json every document
// carries it. serve and mcp leave it to their first writing request, and
// clone to its own settling (engine.CloneResult.Resumed, reported the
// same way).
func (a *app) noticeRestores(ctx context.Context, e *engine.Engine, command string, dryRun bool) error {
	if selfSettlingCommands[command] {
		return nil
	}
	if readOnlyCommands[command] || dryRun || a.readOnlyOpen || residentCommands[command] || strings.HasPrefix(command, "remote ") {
		if j := e.PendingRestore(); j != nil {
			a.notices.PendingRestore = protocol.JournalView(j)
			a.notef("a restore to %s (task %s) was interrupted at %s; the next command that may write (save, restore, gc, drop) completes it",
				j.Target.Short(), j.Task, j.Started.Local().Format(time.DateTime))
		}
		return nil
	}
	settled, err := e.SettleRestore(ctx)
	if err == nil && settled != nil {
		a.reportSettled(settled)
	}
	return err
}

// changesNothing reports whether cmd runs as a dry run (--dry-run), which
// changes nothing: not even by completing an interrupted restore.
func changesNothing(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup("dry-run")
	return f != nil && f.Value.String() == "true"
}

// reportSettled reports an interrupted restore the command settled: on
// stderr (unless -q), and in every JSON document.
func (a *app) reportSettled(settled *engine.SettledRestore) {
	a.notices.SettledJSON = protocol.SettledView(settled)
	if settled.Discarded != "" {
		a.notef("warning: discarded an interrupted restore to %s (task %s) without replaying it: %s",
			settled.Journal.Target.Short(), settled.Journal.Task, settled.Discarded)
		return
	}
	res := settled.Completed
	for _, c := range res.Conflicts {
		a.notef("conflict: %s: %s", c.Path, protocol.ConflictReason(c))
	}
	a.notef("completed an interrupted restore to %s: %d written, %d deleted, %s",
		res.Restored.Short(), len(res.Written), len(res.Deleted), conflictCount(len(res.Conflicts)))
}

// notef prints a notice line on stderr, unless -q or --json.
func (a *app) notef(format string, args ...any) {
	if !a.quiet && !a.json {
		fmt.Fprintf(a.stderr, "ckpt: "+format+"\n", args...)
	}
}

// withEngine runs fn with an open engine and closes it.
func (a *app) withEngine(cmd *cobra.Command, fn func(e *engine.Engine) error) error {
	e, err := a.open(cmd)
	if err != nil {
		return err
	}
	return a.withOpened(e, fn)
}

// withOpened runs fn on e, which a.open returned, and closes e after it
// (unless it is a server's).
func (a *app) withOpened(e *engine.Engine, fn func(e *engine.Engine) error) error {
	err := fn(e)
	if err != nil {
		a.pendingAtEnd = e.PendingRestore()
	}
	a.progress.clear()
	if a.server != nil { // the server's engine outlives the command
		return err
	}
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}

// leftPending is the restore a command that failed with err left
// pending (its journal written, the workspace part way): the engine's
// when the command ended, or the one it could not settle; nil when none.
func (a *app) leftPending(err error) *engine.Journal {
	if pending := (*engine.PendingRestoreError)(nil); errors.As(err, &pending) {
		return pending.Journal
	}
	return a.pendingAtEnd
}

// fail prints err as one line (or one JSON document) and returns its exit code.
func (a *app) fail(err error) int { return a.report(protocol.ExitCode(err), err) }

// report prints err as one line (or one JSON document) and returns code.
func (a *app) report(code int, err error) int {
	msg := strings.ReplaceAll(protocol.Message(err), "\n", " ")
	if a.json {
		a.printJSON(protocol.ErrorJSON{Error: protocol.ErrorBody{Code: code, Message: msg}})
	} else {
		fmt.Fprintf(a.stderr, "ckpt: %s\n", msg)
	}
	return code
}

// printJSON prints v as one indented JSON document, with the open's
// notices added as leading fields when v is an object. A document that
// cannot be encoded or written makes the command exit non-zero.
func (a *app) printJSON(v any) {
	doc, err := jsonrpc.Marshal(v)
	if err == nil {
		err = a.writeJSONDoc(doc)
	}
	a.noteJSONError(err)
}

// printJSONDoc is printJSON for a value already encoded on one line (as
// jsonrpc.Marshal does).
func (a *app) printJSONDoc(doc []byte) { a.noteJSONError(a.writeJSONDoc(doc)) }

// noteJSONError keeps the first JSON document that could not be encoded or
// written, which makes the command exit non-zero.
func (a *app) noteJSONError(err error) {
	if err != nil && a.writeErr == nil {
		a.writeErr = fmt.Errorf("write JSON: %w", err)
	}
}

// writeJSONDoc writes doc with the notices spliced in, indented as --json
// asked.
func (a *app) writeJSONDoc(doc []byte) (err error) {
	if doc, err = a.withNotices(doc); err != nil {
		return err
	}
	if !a.indentJSON {
		_, err = a.stdout.Write(append(doc, '\n'))
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = a.stdout.Write(buf.Bytes())
	return err
}

// withNotices splices the notices into the JSON object doc, keeping its
// own fields and their order.
func (a *app) withNotices(doc []byte) ([]byte, error) {
	if a.notices == (protocol.NoticesJSON{}) || len(doc) < 2 || doc[0] != '{' {
		return doc, nil
	}
	fields, err := jsonrpc.Marshal(a.notices)
	if err != nil {
		return nil, err
	}
	out := append([]byte{}, fields[:len(fields)-1]...) // the notices' fields, open
	if string(doc) == "{}" {
		return append(out, '}'), nil
	}
	return append(append(out, ','), doc[1:]...), nil
}

// say prints a human line unless --quiet or --json.
func (a *app) say(format string, args ...any) {
	if !a.quiet && !a.json {
		fmt.Fprintf(a.stdout, format+"\n", args...)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// pathsAfterDash splits positional args at "--".
func pathsAfterDash(cmd *cobra.Command, args []string) (before, paths []string) {
	if n := cmd.ArgsLenAtDash(); n >= 0 {
		return args[:n], args[n:]
	}
	return args, nil
}
