package localsock

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// pipeFileName is the file in the store directory that names the pipe.
const pipeFileName = "serve.pipe"

// Endpoint is the path of the store's endpoint: the file naming its pipe.
func Endpoint(storeDir string) string { return filepath.Join(storeDir, pipeFileName) }

// pipeBuffer is the size of each pipe instance's in and out buffers.
const pipeBuffer = 64 << 10

// Listen creates a pipe with a fresh random name, open to the current
// user only, and writes its name to the store's endpoint file (replacing
// one left by a server that died); closing the listener removes the file.
// The caller must hold the store's lock.
func Listen(storeDir string) (net.Listener, error) {
	var rnd [16]byte
	rand.Read(rnd[:])
	l := &pipeListener{name: `\\.\pipe\ckpt-` + hex.EncodeToString(rnd[:]), file: Endpoint(storeDir)}
	sa, err := currentUserOnly()
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	l.sa = sa
	if l.closed, err = windows.CreateEvent(nil, 1, 0, nil); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if l.next, err = l.instance(windows.FILE_FLAG_FIRST_PIPE_INSTANCE); err != nil {
		windows.CloseHandle(l.closed)
		return nil, fmt.Errorf("listen: pipe %s: %w", l.name, err)
	}
	if err := writeFileAtomic(l.file, []byte(l.name)); err != nil {
		windows.CloseHandle(l.next)
		windows.CloseHandle(l.closed)
		return nil, fmt.Errorf("listen: %w", err)
	}
	return l, nil
}

// Dial connects to the store's server. It returns ErrNoServer when there
// is no endpoint file or its pipe no longer exists; such a file is removed
// when it is provably stale (removeIfStale: no process holds the store's
// lock) and still names that pipe.
func Dial(storeDir string) (net.Conn, error) {
	file := Endpoint(storeDir)
	name, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoServer
	}
	if err != nil {
		return nil, err
	}
	path, err := windows.UTF16PtrFromString(string(name))
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: %w", file, err)
	}
	deadline := time.Now().Add(dialBusyWait)
	for {
		h, err := windows.CreateFile(path, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil,
			windows.OPEN_EXISTING, windows.FILE_FLAG_OVERLAPPED, 0)
		switch {
		case err == nil:
			return newPipeConn(h, string(name)), nil
		case errors.Is(err, windows.ERROR_FILE_NOT_FOUND):
			removeIfStale(storeDir, func() { removeIfNames(file, name) })
			return nil, ErrNoServer
		case errors.Is(err, windows.ERROR_PIPE_BUSY) && time.Now().Before(deadline):
			waitNamedPipe(path, dialBusyWait)
		default:
			return nil, fmt.Errorf("dial %s: %w", name, err)
		}
	}
}

// dialBusyWait bounds how long Dial waits while every instance of the pipe
// is taken; the server creates a new one as soon as it accepts.
const dialBusyWait = 5 * time.Second

var procWaitNamedPipe = windows.NewLazySystemDLL("kernel32.dll").NewProc("WaitNamedPipeW")

// waitNamedPipe waits until an instance of the pipe is free or d passes.
func waitNamedPipe(name *uint16, d time.Duration) {
	procWaitNamedPipe.Call(uintptr(unsafe.Pointer(name)), uintptr(d.Milliseconds()))
}

// removeIfNames removes the endpoint file if it still names the pipe that
// is gone: a new server may have replaced it meanwhile.
func removeIfNames(file string, name []byte) {
	if now, err := os.ReadFile(file); err == nil && bytes.Equal(now, name) {
		os.Remove(file)
	}
}

// currentUserOnly is a security descriptor that grants the current user
// full access to the pipe and nobody else any.
func currentUserOnly() (*windows.SecurityAttributes, error) {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;" + user.User.Sid.String() + ")")
	if err != nil {
		return nil, err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	return sa, nil
}

// writeFileAtomic writes data to a temporary file and renames it to path.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pipeListener accepts clients on one named pipe. There is always one
// instance waiting (next), so a client that dials between two Accept
// calls finds the pipe and never mistakes the server for gone.
type pipeListener struct {
	name   string
	file   string
	sa     *windows.SecurityAttributes
	closed windows.Handle // a manual-reset event, set by Close

	mu        sync.Mutex
	next      windows.Handle // the instance the next Accept connects; 0 once closed
	accepting bool
	done      bool
}

// instance creates one instance of the pipe.
func (l *pipeListener) instance(extra uint32) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(l.name)
	if err != nil {
		return 0, err
	}
	return windows.CreateNamedPipe(name, windows.PIPE_ACCESS_DUPLEX|windows.FILE_FLAG_OVERLAPPED|extra,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		windows.PIPE_UNLIMITED_INSTANCES, pipeBuffer, pipeBuffer, 0, l.sa)
}

// Accept waits for a client on the waiting instance, then creates the
// next one before it returns the connection.
func (l *pipeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return nil, net.ErrClosed
	}
	h := l.next
	l.accepting = true
	l.mu.Unlock()

	err := l.connect(h)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepting = false
	if err == nil && l.done {
		err = net.ErrClosed
	}
	if err != nil {
		windows.CloseHandle(h)
		l.next = 0
		l.release()
		return nil, err
	}
	if l.next, err = l.instance(0); err != nil {
		l.next = 0
		windows.CloseHandle(h)
		return nil, fmt.Errorf("accept: pipe %s: %w", l.name, err)
	}
	return newPipeConn(h, l.name), nil
}

// connect waits until a client opens instance h or the listener closes.
func (l *pipeListener) connect(h windows.Handle) error {
	if h == 0 {
		return net.ErrClosed
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(ev)
	ov := windows.Overlapped{HEvent: ev}
	switch err := windows.ConnectNamedPipe(h, &ov); {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		return nil
	case !errors.Is(err, windows.ERROR_IO_PENDING):
		return fmt.Errorf("accept: %w", err)
	}
	which, err := windows.WaitForMultipleObjects([]windows.Handle{ev, l.closed}, false, windows.INFINITE)
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	if which == windows.WAIT_OBJECT_0+1 {
		windows.CancelIoEx(h, &ov)
	}
	var n uint32
	if err := windows.GetOverlappedResult(h, &ov, &n, true); err != nil {
		if which == windows.WAIT_OBJECT_0+1 {
			return net.ErrClosed
		}
		return fmt.Errorf("accept: %w", err)
	}
	return nil
}

// Close stops Accept, removes the endpoint file and the waiting instance.
// Connections already accepted stay open.
func (l *pipeListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	l.done = true
	windows.SetEvent(l.closed)
	removeIfNames(l.file, []byte(l.name))
	l.release()
	return nil
}

// release frees the waiting instance and the close event once the
// listener is closed and no Accept uses them; l.mu is held.
func (l *pipeListener) release() {
	if !l.done || l.accepting {
		return
	}
	if l.next != 0 {
		windows.CloseHandle(l.next)
		l.next = 0
	}
	if l.closed != 0 {
		windows.CloseHandle(l.closed)
		l.closed = 0
	}
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.file) }

// pipeAddr is a pipe endpoint as a net.Addr: the endpoint file's path, what
// a user can find in the store directory.
type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

// pipeConn is one connected pipe instance. Its reads and writes go through
// the runtime's I/O completion port (the handle is overlapped), so Close
// from another goroutine ends a pending Read.
type pipeConn struct {
	*os.File
	addr pipeAddr
}

func newPipeConn(h windows.Handle, name string) *pipeConn {
	return &pipeConn{os.NewFile(uintptr(h), name), pipeAddr(name)}
}

func (c *pipeConn) LocalAddr() net.Addr  { return c.addr }
func (c *pipeConn) RemoteAddr() net.Addr { return c.addr }

// Read and Write keep net.Conn's contract: once the connection is closed
// they fail with net.ErrClosed, as a socket's do (an *os.File says
// os.ErrClosed).
func (c *pipeConn) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	return n, closedAsNet(err)
}

func (c *pipeConn) Write(p []byte) (int, error) {
	n, err := c.File.Write(p)
	return n, closedAsNet(err)
}

func closedAsNet(err error) error {
	if errors.Is(err, os.ErrClosed) {
		return net.ErrClosed
	}
	return err
}

// Renew returns a new listener for the store when ln's endpoint file no
// longer names its pipe (removed, or replaced), nil while it does; ln is
// then closed, leaving the new endpoint file.
func Renew(storeDir string, ln net.Listener) (net.Listener, error) {
	l, ok := ln.(*pipeListener)
	if name, err := os.ReadFile(Endpoint(storeDir)); !ok || err == nil && string(name) == l.name {
		return nil, nil
	}
	l.Close() // removes the endpoint file only while it names l's pipe
	return Listen(storeDir)
}
