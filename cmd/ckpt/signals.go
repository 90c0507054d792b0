package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/osfs"
)

// interrupt turns the first SIGINT, SIGTERM or SIGHUP into the cancellation of a
// command's context, and remembers the signal so the process can exit with
// the shell's code for it (128 + signal number: 130, 143, 129).
type interrupt struct {
	sigs   chan os.Signal
	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		sig syscall.Signal // 0 until a signal arrives
	}
}

// watchSignals starts listening; stop must be called when the command ends.
func watchSignals(parent context.Context) (context.Context, *interrupt) {
	ctx, cancel := context.WithCancel(parent)
	in := &interrupt{sigs: make(chan os.Signal, 1), cancel: cancel, done: make(chan struct{})}
	if len(osfs.TerminationSignals) > 0 { // none: Notify would relay every signal
		signal.Notify(in.sigs, osfs.TerminationSignals...)
	}
	go func() {
		select {
		case s := <-in.sigs:
			in.mu.Lock()
			in.mu.sig, _ = s.(syscall.Signal)
			in.mu.Unlock()
			cancel()
		case <-in.done:
		}
	}()
	return ctx, in
}

// stop stops listening and cancels the context; a later signal gets the
// default disposition (the process dies of it).
func (in *interrupt) stop() {
	signal.Stop(in.sigs)
	close(in.done)
	in.cancel()
}

// signalled returns the signal that cancelled the command, 0 when none did.
func (in *interrupt) signalled() syscall.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.mu.sig
}

// interruptedError is the error of a command a signal stopped; pending
// is the restore it left part way (nil when none).
type interruptedError struct {
	sig     syscall.Signal
	pending *engine.Journal
}

func (e interruptedError) Error() string {
	msg := fmt.Sprintf("interrupted by %s", signalName(e.sig))
	if j := e.pending; j != nil {
		msg += fmt.Sprintf("; the restore to %s (task %s) is left part way in the workspace: the next command that may write (save, restore, gc, drop) completes it",
			j.Target.Short(), j.Task)
	}
	return msg
}

// exitCode is the shell's code for death by the signal.
func (e interruptedError) exitCode() int { return 128 + int(e.sig) }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}
