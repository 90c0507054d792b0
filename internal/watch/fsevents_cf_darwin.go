package watch

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CoreFoundation and CoreServices (FSEvents) functions the FSEvents
// backend calls, reached through purego: the release binaries are built
// without cgo.
var cf struct {
	once sync.Once
	err  error

	stringCreate  func(alloc uintptr, s string, encoding uint32) uintptr
	arrayCreate   func(alloc uintptr, values *uintptr, n int, callbacks uintptr) uintptr
	release       func(ref uintptr)
	runLoopGet    func() uintptr
	runLoopRun    func()
	runLoopStop   func(rl uintptr)
	streamCreate  func(alloc uintptr, cb uintptr, ctx *streamContext, paths uintptr, since uint64, latency float64, flags uint32) uintptr
	streamSched   func(stream, rl, mode uintptr)
	streamStart   func(stream uintptr) bool
	streamFlush   func(stream uintptr)
	streamStop    func(stream uintptr)
	streamInval   func(stream uintptr)
	streamRelease func(stream uintptr)

	// callback is the one C entry point of every stream; it finds the
	// stream's backend by the context's info.
	callback uintptr
	streams  map[uintptr]*fsevents
	next     uintptr
	mu       sync.Mutex
}

const (
	coreFoundationFramework = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
	coreServicesFramework   = "/System/Library/Frameworks/CoreServices.framework/CoreServices"
	cfStringEncodingUTF8    = 0x08000100
	fsEventSinceNow         = 1<<64 - 1 // kFSEventStreamEventIdSinceNow
	streamLatency           = 0.05      // seconds; FlushSync delivers at once anyway
)

// FSEventStreamCreateFlags the stream is created with.
const (
	fsFlagNoDefer    = 0x02
	fsFlagWatchRoot  = 0x04
	fsFlagFileEvents = 0x10
)

// FSEventStreamEventFlags the backend acts on.
const (
	fsMustScanSubDirs = 0x01
	fsUserDropped     = 0x02
	fsKernelDropped   = 0x04
	fsEventIdsWrapped = 0x08
	fsRootChanged     = 0x20
	fsMount           = 0x40
	fsUnmount         = 0x80
	fsItemCreated     = 0x100
	fsItemRemoved     = 0x200
	fsItemRenamed     = 0x800

	fsLostEvents         = fsMustScanSubDirs | fsUserDropped | fsKernelDropped | fsEventIdsWrapped
	fsRootOrMountChanged = fsRootChanged | fsMount | fsUnmount
	fsNameChanged        = fsItemCreated | fsItemRemoved | fsItemRenamed
)

// streamContext is FSEventStreamContext.
type streamContext struct {
	version         int
	info            uintptr
	retain, release uintptr
	copyDescription uintptr
}

// loadCF loads the frameworks once.
func loadCF() error {
	cf.once.Do(func() {
		lib, err := purego.Dlopen(coreFoundationFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			cf.err = fmt.Errorf("load CoreFoundation: %w", err)
			return
		}
		svc, err := purego.Dlopen(coreServicesFramework, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			cf.err = fmt.Errorf("load CoreServices: %w", err)
			return
		}
		purego.RegisterLibFunc(&cf.stringCreate, lib, "CFStringCreateWithCString")
		purego.RegisterLibFunc(&cf.arrayCreate, lib, "CFArrayCreate")
		purego.RegisterLibFunc(&cf.release, lib, "CFRelease")
		purego.RegisterLibFunc(&cf.runLoopGet, lib, "CFRunLoopGetCurrent")
		purego.RegisterLibFunc(&cf.runLoopRun, lib, "CFRunLoopRun")
		purego.RegisterLibFunc(&cf.runLoopStop, lib, "CFRunLoopStop")
		purego.RegisterLibFunc(&cf.streamCreate, svc, "FSEventStreamCreate")
		purego.RegisterLibFunc(&cf.streamSched, svc, "FSEventStreamScheduleWithRunLoop")
		purego.RegisterLibFunc(&cf.streamStart, svc, "FSEventStreamStart")
		purego.RegisterLibFunc(&cf.streamFlush, svc, "FSEventStreamFlushSync")
		purego.RegisterLibFunc(&cf.streamStop, svc, "FSEventStreamStop")
		purego.RegisterLibFunc(&cf.streamInval, svc, "FSEventStreamInvalidate")
		purego.RegisterLibFunc(&cf.streamRelease, svc, "FSEventStreamRelease")
		cf.streams = map[uintptr]*fsevents{}
		cf.callback = purego.NewCallback(streamCallback)
	})
	return cf.err
}

// register gives b the info its stream's callbacks carry.
func register(b *fsevents) uintptr {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	cf.next++
	cf.streams[cf.next] = b
	return cf.next
}

func unregister(info uintptr) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	delete(cf.streams, info)
}

// streamCallback is FSEventStreamCallback: n events, their C-string paths
// and their flags. It runs on the stream's run loop thread.
func streamCallback(_, info, n uintptr, paths, flags, _ unsafe.Pointer) {
	cf.mu.Lock()
	b := cf.streams[info]
	cf.mu.Unlock()
	if b == nil || n == 0 {
		return
	}
	ps := unsafe.Slice((*unsafe.Pointer)(paths), n)
	fs := unsafe.Slice((*uint32)(flags), n)
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range ps {
		if !b.eventLocked(goString(ps[i]), fs[i]) {
			return
		}
	}
}

// goString copies the NUL-terminated C string at p.
func goString(p unsafe.Pointer) string {
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}
