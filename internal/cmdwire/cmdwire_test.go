package cmdwire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt/ckpt/internal/testbound"
)

// serve reads one request on conn and answers as fn says.
func serve(t *testing.T, conn net.Conn, fn func(Request, *Frames)) {
	t.Helper()
	go func() {
		defer conn.Close()
		req, err := ReadRequest(bufio.NewReader(conn))
		if err != nil {
			t.Errorf("server: %v", err)
			return
		}
		fn(req, NewFrames(conn))
	}()
}

func TestExchangeCarriesRequestOutputAndExitCode(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	big := bytes.Repeat([]byte{0, 0xff, 'x'}, maxFrame) // binary, and more than one frame
	serve(t, server, func(req Request, f *Frames) {
		if strings.Join(req.Args, " ") != "cat HEAD f" || req.Cwd != "/w" || string(req.Stdin) != "s" || !req.Terminal || req.Colour ||
			strings.Join(req.Env, " ") != "A=1 B=x=y" {
			t.Errorf("server got %+v", req)
		}
		f.Accept()
		var wg sync.WaitGroup
		wg.Go(func() { f.Stdout().Write(big) })
		wg.Go(func() { f.Stderr().Write([]byte("warning\n")) })
		wg.Wait()
		f.Exit(-3)
	})
	var out, errOut bytes.Buffer
	code, err := Exchange(client, Request{Args: []string{"cat", "HEAD", "f"}, Cwd: "/w", Stdin: []byte("s"), Terminal: true,
		Env: []string{"A=1", "B=x=y"}}, time.Time{}, &out, &errOut)
	if err != nil || code != -3 {
		t.Fatalf("Exchange = %d, %v", code, err)
	}
	if !bytes.Equal(out.Bytes(), big) || errOut.String() != "warning\n" {
		t.Fatalf("stdout %d bytes (want %d), stderr %q", out.Len(), len(big), errOut.String())
	}
}

func TestExchangeOfAConnectionThatEndsEarlyIsAnError(t *testing.T) {
	for name, answer := range map[string]func(*Frames, net.Conn){
		"no exit frame": func(f *Frames, _ net.Conn) { f.Stdout().Write([]byte("partial")) },
		"cut frame":     func(_ *Frames, c net.Conn) { c.Write([]byte{kindStdout, 0, 0, 0, 9, 'a'}) },
		"bad kind":      func(_ *Frames, c net.Conn) { c.Write([]byte{'?', 0, 0, 0, 0}) },
		"huge frame":    func(_ *Frames, c net.Conn) { c.Write([]byte{kindStdout, 0xff, 0, 0, 0}) },
		"short exit":    func(_ *Frames, c net.Conn) { c.Write([]byte{kindExit, 0, 0, 0, 1, 0}) },
	} {
		t.Run(name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			serve(t, server, func(_ Request, f *Frames) { answer(f, server) })
			code, err := Exchange(client, Request{Args: []string{"list"}}, time.Time{}, io.Discard, io.Discard)
			if err == nil {
				t.Fatalf("Exchange = %d, nil; want an error", code)
			}
			if name == "no exit frame" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Exchange = %v; want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// A connection that ends before the server accepted the command is
// ErrNotRun (the client may run it elsewhere); once the server accepted
// it, an ended connection is never ErrNotRun.
func TestExchangeTellsACommandNotRunFromOneCut(t *testing.T) {
	for name, c := range map[string]struct {
		answer func(*Frames)
		notRun bool
	}{
		"closed at once":         {func(*Frames) {}, true},
		"accepted, then closed":  {func(f *Frames) { f.Accept() }, false},
		"output without accept":  {func(f *Frames) { f.Stderr().Write([]byte("x")) }, false},
		"accepted, output, gone": {func(f *Frames) { f.Accept(); f.Stdout().Write([]byte("x")) }, false},
	} {
		t.Run(name, func(t *testing.T) {
			client, server := net.Pipe()
			defer client.Close()
			serve(t, server, func(_ Request, f *Frames) { c.answer(f) })
			_, err := Exchange(client, Request{Args: []string{"save"}}, time.Time{}, io.Discard, io.Discard)
			if err == nil || errors.Is(err, ErrNotRun) != c.notRun {
				t.Fatalf("Exchange = %v; want an error that is ErrNotRun: %v", err, c.notRun)
			}
		})
	}
	client, server := net.Pipe()
	server.Close()
	if _, err := Exchange(client, Request{Args: []string{"save"}}, time.Time{}, io.Discard, io.Discard); !errors.Is(err, ErrNotRun) {
		t.Fatalf("Exchange with a peer that took nothing = %v; want ErrNotRun", err)
	}
}

func TestReadRequestRefusesGarbage(t *testing.T) {
	for _, in := range []string{"", "{\"args\":", "not json\n"} {
		if _, err := ReadRequest(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("ReadRequest(%q) = nil error", in)
		}
	}
}

// Arguments, a directory and environment entries that are not valid
// UTF-8 reach the server byte for byte: "a\xff" and "a\xfe" stay two names.
func TestRequestKeepsArgumentsThatAreNotUTF8(t *testing.T) {
	want := Request{Args: []string{"restore", "@1", "a\xff", "a\xfe", "é"}, Cwd: "/w/d\xfe", Env: []string{"PASS=p\xffq", "A=é"}}
	var line bytes.Buffer
	if err := WriteRequest(&line, want); err != nil {
		t.Fatal(err)
	}
	if !IsRequest(line.Bytes()) {
		t.Fatalf("%s is not taken for a request", line.Bytes())
	}
	got, err := ReadRequest(bufio.NewReader(&line))
	if err != nil || !slices.Equal(got.Args, want.Args) || got.Cwd != want.Cwd || !slices.Equal(got.Env, want.Env) {
		t.Fatalf("ReadRequest = %q in %q with %q, %v; want %q in %q with %q", got.Args, got.Cwd, got.Env, err, want.Args, want.Cwd, want.Env)
	}
	if _, err := DecodeRequest([]byte(`{"args":["x"],"args_base64":["!"]}`)); err == nil {
		t.Fatal("bad args_base64 decoded")
	}
}

// A server that takes the request and never accepts it (stopped, or
// wedged) fails the Exchange with ErrNotAccepted once acceptBy has come,
// not ErrNotRun (which would send the client to try again), and its
// connection is closed; at once when acceptBy had passed before the
// Exchange (a client that found the server as its wait ended). acceptBy
// bounds the wait for the accept frame only, not a command that runs
// longer.
func TestExchangeBoundsTheWaitForAcceptOnly(t *testing.T) {
	const within = 50 * time.Millisecond
	client, server := net.Pipe()
	defer client.Close()
	gone := make(chan struct{})
	serve(t, server, func(Request, *Frames) {
		io.Copy(io.Discard, server) // until the client closes its end
		close(gone)
	})
	_, err := Exchange(client, Request{Args: []string{"list"}}, time.Now().Add(within), io.Discard, io.Discard)
	if !errors.Is(err, ErrNotAccepted) || errors.Is(err, ErrNotRun) {
		t.Fatalf("Exchange with a server that never accepts = %v; want ErrNotAccepted, not ErrNotRun", err)
	}
	<-gone

	client, server = net.Pipe()
	go io.Copy(io.Discard, server)
	if _, err := Exchange(client, Request{Args: []string{"list"}}, time.Now().Add(-within), io.Discard, io.Discard); !errors.Is(err, ErrNotAccepted) {
		t.Fatalf("Exchange whose wait had ended = %v; want ErrNotAccepted", err)
	}
	client.Close()

	client, server = net.Pipe()
	defer client.Close()
	serve(t, server, func(_ Request, f *Frames) {
		f.Accept()
		<-time.After(4 * within) // a command that runs longer than the accept may take
		f.Exit(7)
	})
	if code, err := Exchange(client, Request{Args: []string{"save"}}, time.Now().Add(within), io.Discard, io.Discard); err != nil || code != 7 {
		t.Fatalf("Exchange of a command that ran past acceptBy = %d, %v; want 7, nil", code, err)
	}
}

// failingWriter fails every write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A client whose own output fails reads the command's output to its end
// (dropping it), so that the server runs the command to its end as it
// runs without a server, and reports the failed write with the exit code.
func TestExchangeWhoseOutputFailsReadsTheCommandToItsEnd(t *testing.T) {
	full := errors.New("no space left on device")
	for _, toStderr := range []bool{false, true} {
		client, server := net.Pipe()
		ended := make(chan struct{})
		serve(t, server, func(_ Request, f *Frames) {
			defer close(ended)
			f.Accept()
			f.Stdout().Write([]byte("first\n"))
			f.Stderr().Write([]byte("note\n"))
			f.Stdout().Write([]byte("more\n")) // net.Pipe: blocks until the client reads it
			f.Exit(7)
		})
		var out, errOut io.Writer = failingWriter{full}, io.Discard
		if toStderr {
			out, errOut = io.Discard, failingWriter{full}
		}
		code, err := Exchange(client, Request{Args: []string{"save"}}, time.Time{}, out, errOut)
		var failed *OutputError
		if !errors.As(err, &failed) || !errors.Is(err, full) || failed.Code != 7 || code != 7 || failed.Stderr != toStderr {
			t.Fatalf("stderr %v: Exchange = %d, %+v; want the write's error with exit code 7", toStderr, code, err)
		}
		testbound.Within(t, testbound.Hang, func() { <-ended }) // the server wrote all it had: the client read it
		client.Close()
	}
}
