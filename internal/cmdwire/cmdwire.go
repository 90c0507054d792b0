// Package cmdwire is the protocol between a ckpt command and the resident
// server of its store that runs it (see internal/localsock for how they
// meet). One connection carries one command:
//
//	client → server   the Request, as one JSON line
//	server → client   frames, each [1] kind [4] length (big-endian) [length] payload:
//	                  'a' the server runs the command (empty), always first,
//	                  'o' a piece of standard output, 'e' of standard error,
//	                  'x' the exit code (4 bytes, big-endian, signed), always last
//
// A server that is stopping closes a connection without the 'a' frame:
// the command did not run, and the client may run it elsewhere (see
// ErrNotRun).
//
// Output is framed as raw bytes, so the server streams whatever the command
// writes (binary `cat` output included) without re-encoding it. The client
// sends nothing after its request: the server takes the end of the
// client's side (EOF or an error) as the client having gone, and cancels
// the command.
//
// The server's endpoint also speaks JSON-RPC 2.0, one message per line:
// a first line that is not a Request (see IsRequest) starts a JSON-RPC
// connection instead.
package cmdwire

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ckpt/ckpt/internal/lossless"
)

// Request is the command a client asks the server to run.
type Request struct {
	Args  []string `json:"args"`            // the command line, with --store and --task made explicit
	Cwd   string   `json:"cwd"`             // the client's directory, against which --workspace is resolved
	Stdin []byte   `json:"stdin,omitempty"` // the --state input, read by the client
	// Terminal says the client's standard output is a terminal, so the
	// output is shaped for a person (indented JSON); Colour says the
	// client would colour it (a terminal, and NO_COLOR unset).
	Terminal bool `json:"terminal,omitempty"`
	Colour   bool `json:"colour,omitempty"`
	// Env is the client's environment (KEY=value, as os.Environ returns
	// it), which a command that reaches a remote reads its credentials
	// and passphrase from, as it would run in the client's process. Nil
	// from a client that sends none: the server's own.
	Env []string `json:"env,omitempty"`
}

// Frame kinds.
const (
	kindAccepted = 'a'
	kindStdout   = 'o'
	kindStderr   = 'e'
	kindExit     = 'x'
)

// maxFrame bounds a frame's payload: writers split larger writes, readers
// refuse larger frames as damage.
const maxFrame = 1 << 20

// requestLine is a Request on the wire: an argument, a directory or an
// environment entry that is not valid UTF-8 (argv and the environment are
// bytes on Unix) is sent also as its bytes, the way package lossless
// carries names through JSON, so the server runs the very command line
// the client was given, with a passphrase byte for byte.
type requestLine struct {
	Request
	ArgsBase64 []string `json:"args_base64,omitempty"`
	CwdBase64  *string  `json:"cwd_base64,omitempty"`
	EnvBase64  []string `json:"env_base64,omitempty"`
}

// WriteRequest sends req as one JSON line.
func WriteRequest(w io.Writer, req Request) error {
	line, err := json.Marshal(requestLine{Request: req, ArgsBase64: lossless.Base64List(req.Args), CwdBase64: lossless.Base64(req.Cwd),
		EnvBase64: lossless.Base64List(req.Env)})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// ReadRequest reads the request line from r, which the caller keeps
// reading afterwards to learn when the client leaves.
func ReadRequest(r *bufio.Reader) (Request, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return Request{}, fmt.Errorf("read request: %w", err)
	}
	return DecodeRequest(line)
}

// DecodeRequest decodes a request line.
func DecodeRequest(line []byte) (Request, error) {
	var req requestLine
	if err := json.Unmarshal(line, &req); err != nil {
		return Request{}, fmt.Errorf("read request: %w", err)
	}
	var err error
	if req.ArgsBase64 != nil {
		if req.Args, err = lossless.DecodeList("args_base64", req.ArgsBase64); err != nil {
			return Request{}, fmt.Errorf("read request: %w", err)
		}
	}
	if req.EnvBase64 != nil {
		if req.Env, err = lossless.DecodeList("env_base64", req.EnvBase64); err != nil {
			return Request{}, fmt.Errorf("read request: %w", err)
		}
	}
	if req.CwdBase64 != nil {
		if req.Cwd, err = lossless.Decode("cwd_base64", *req.CwdBase64); err != nil {
			return Request{}, fmt.Errorf("read request: %w", err)
		}
	}
	return req.Request, nil
}

// IsRequest reports whether line, the first a client sent, is a Request:
// a JSON object with "args" and without "jsonrpc" (which every JSON-RPC
// message carries). Anything else, malformed lines included, is left to
// JSON-RPC, which answers those with a parse error.
func IsRequest(line []byte) bool {
	var probe struct {
		Args    json.RawMessage `json:"args"`
		JSONRPC json.RawMessage `json:"jsonrpc"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.Args != nil && probe.JSONRPC == nil
}

// Frames writes a command's frames to one connection. Its methods are safe
// for concurrent use; frames are never interleaved.
type Frames struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // the frame being written, reused
}

// NewFrames writes frames to w.
func NewFrames(w io.Writer) *Frames { return &Frames{w: w} }

// Stdout and Stderr are writers whose writes become output frames.
func (f *Frames) Stdout() io.Writer { return stream{f, kindStdout} }
func (f *Frames) Stderr() io.Writer { return stream{f, kindStderr} }

// Accept tells the client that the server runs its command: the first
// frame, sent before the command starts.
func (f *Frames) Accept() error { return f.frame(kindAccepted, nil) }

// Exit sends the exit code, the last frame.
func (f *Frames) Exit(code int) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	return f.frame(kindExit, b[:])
}

// frame writes one frame with a single Write (one system call on a
// connection), header and payload together.
func (f *Frames) frame(kind byte, p []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf = append(f.buf[:0], kind, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(f.buf[1:], uint32(len(p)))
	f.buf = append(f.buf, p...)
	_, err := f.w.Write(f.buf)
	return err
}

type stream struct {
	f    *Frames
	kind byte
}

func (s stream) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		n := min(len(p)-done, maxFrame)
		if err := s.f.frame(s.kind, p[done:done+n]); err != nil {
			return done, err
		}
		done += n
	}
	return len(p), nil
}

// ErrNotRun is the error of an Exchange whose server ended the
// connection before it accepted the command (a server that stops as the
// client reaches it): the command did not run.
var ErrNotRun = errors.New("the server ended the connection without running the command")

// ErrNotAccepted is the error of an Exchange whose server did not accept
// the command within the time the client gave it (a stopped or wedged
// server). It does not match ErrNotRun: a server that is there but does
// not answer is not one that stopped, and another try would wait as long.
var ErrNotAccepted = errors.New("the server did not accept the command in time")

// OutputError is Exchange failing to write the command's output where
// the client shows it (a full disk, a closed pipe): the client's own
// failure, which it reports as it would without a server, not the
// connection's or the server's. The command ran to its end all the same,
// as it does without a server (Exchange reads the rest of its output and
// drops it), and Code is its exit code; Stderr says the failed write was
// to stderr, not stdout.
type OutputError struct {
	Err    error
	Code   int
	Stderr bool
}

func (e *OutputError) Error() string { return e.Err.Error() }

// Unwrap returns the write's error.
func (e *OutputError) Unwrap() error { return e.Err }

// Exchange sends req on conn and copies the server's output frames to
// stdout and stderr until the exit frame, whose code it returns. A
// connection that ends first, or a malformed frame, is an error; one that
// ends before the server accepted the command wraps ErrNotRun; a failure
// to write stdout or stderr is an *OutputError, once the command ended.
//
// acceptBy, unless zero, ends the wait for the server to accept the
// command (its first frame): a caller that waited for the server before
// (a client that found it while it waited for the store's lock) gives
// what is left of its wait, not a new one. It does not bound the
// command's run. When it passes first (or had passed), conn is closed and
// Exchange fails with ErrNotAccepted: the command did not run; or, if the
// server's accept came just then, with another error: the command is
// cancelled, as the command of any client that goes away, and may have
// run.
func Exchange(conn io.ReadWriteCloser, req Request, acceptBy time.Time, stdout, stderr io.Writer) (int, error) {
	deadline := CloseUnanswered(conn, acceptBy)
	defer deadline.Answered()
	notRun := func(err error) error {
		if deadline.Expired() {
			return ErrNotAccepted
		}
		return fmt.Errorf("%w (%v)", ErrNotRun, err)
	}
	if err := WriteRequest(conn, req); err != nil {
		return 0, notRun(err)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	var h [5]byte
	var buf []byte
	accepted := false
	var failed *OutputError // the first write that failed; what follows is dropped
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if !accepted {
				return 0, notRun(err)
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("connection ended before the command did: %w", err)
		}
		if !accepted && !deadline.Answered() {
			// The deadline closed conn as the accept came: the server
			// cancels the command, which may have run all the same, so
			// this is not ErrNotAccepted (which says it did not).
			return 0, errors.New("the server accepted the command as the wait for it ended; it was cancelled and may have run")
		}
		accepted = true
		n := binary.BigEndian.Uint32(h[1:])
		if n > maxFrame {
			return 0, fmt.Errorf("malformed frame: %d bytes", n)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		p := buf[:n]
		if _, err := io.ReadFull(r, p); err != nil {
			return 0, fmt.Errorf("connection ended inside a frame: %w", err)
		}
		var err error
		switch h[0] {
		case kindAccepted:
		case kindStdout:
			if failed == nil {
				_, err = stdout.Write(p)
			}
		case kindStderr:
			if failed == nil {
				_, err = stderr.Write(p)
			}
		case kindExit:
			if n != 4 {
				return 0, fmt.Errorf("malformed exit frame: %d bytes", n)
			}
			code := int(int32(binary.BigEndian.Uint32(p)))
			if failed != nil {
				failed.Code = code
				return code, failed
			}
			return code, nil
		default:
			return 0, fmt.Errorf("malformed frame: kind %q", h[0])
		}
		if err != nil {
			failed = &OutputError{Err: err, Stderr: h[0] == kindStderr}
		}
	}
}

// AnswerDeadline closes a connection whose server does not answer in
// time (see CloseUnanswered).
type AnswerDeadline struct {
	t       *time.Timer
	expired atomic.Bool
}

// CloseUnanswered closes conn once time by has come unless Answered is
// called first: a client that waits for a server's answer (the accept
// frame, or the reply to a JSON-RPC attach) does not wait for ever on a
// server that is stopped or wedged, whose connection the system accepts
// all the same. The Read or Write that waits then fails. A by that has
// passed already closes conn at once; the zero time never closes it.
func CloseUnanswered(conn io.Closer, by time.Time) *AnswerDeadline {
	a := &AnswerDeadline{}
	if !by.IsZero() {
		a.t = time.AfterFunc(time.Until(by), func() {
			a.expired.Store(true)
			conn.Close()
		})
	}
	return a
}

// Answered ends the deadline, and reports false when the deadline had
// passed already: the connection is closed, or being closed, whatever was
// read. A second call reports false too.
func (a *AnswerDeadline) Answered() bool { return a.t == nil || a.t.Stop() }

// Expired reports whether the deadline closed the connection.
func (a *AnswerDeadline) Expired() bool { return a.expired.Load() }
