package engine

import (
	"slices"

	"github.com/ckpt/ckpt/engine/internal/save"
)

// Capture is what a save captures: the exclusion profile, the extra
// patterns and the file size cap, with the meanings of Options.Profile,
// Exclude and MaxFileSize. An operation given a Capture (SaveOptions,
// RestoreOptions, DiffOptions) reads the workspace under its rules instead
// of the Engine's: the resident Engine of a host serves clients whose
// rules differ (two extensions, each with its own exclusion list, on one
// workspace). Such an operation walks the workspace as a cold process
// would, never trusting the change watcher, and writes no stat-cache
// record (a record vouches for a directory's tree under the rules that
// made it, which the watched saves of the Engine's own rules reuse); it
// reads the stat cache, whose entries it checks one by one as any save
// does. A Capture equal to the Engine's is the Engine's, with its watcher.
type Capture struct {
	Profile     string   `json:"profile,omitempty"`
	Exclude     []string `json:"exclude,omitempty"`
	MaxFileSize int64    `json:"max_file_size,omitempty"`
}

// Validate refuses values that mean nothing (an unknown profile, a
// negative size cap other than NoMaxFileSize) with ErrBadRequest, as Open
// refuses its Options'.
func (c Capture) Validate() error {
	return Options{Profile: c.Profile, MaxFileSize: c.MaxFileSize}.validate()
}

// check is Validate of a Capture that may be nil (the Engine's, valid).
func (c *Capture) check() error {
	if c == nil {
		return nil
	}
	return c.Validate()
}

// rules is c as it applies, for sameCapture: nil is the Engine's own
// capture, "" the default profile, and MaxFileSize the walker's cap (0:
// none).
func (e *Engine) rules(c *Capture) Capture {
	c = e.captureOf(c)
	profile := c.Profile
	if profile == "" {
		profile = "default"
	}
	return Capture{Profile: profile, Exclude: c.Exclude, MaxFileSize: Options{MaxFileSize: c.MaxFileSize}.maxFileSize()}
}

// sameCapture reports whether a and b capture alike (nil: the Engine's).
func (e *Engine) sameCapture(a, b *Capture) bool {
	x, y := e.rules(a), e.rules(b)
	return x.Profile == y.Profile && slices.Equal(x.Exclude, y.Exclude) && x.MaxFileSize == y.MaxFileSize
}

// captureOf is c, or the Engine's own capture for nil, as Options give it.
func (e *Engine) captureOf(c *Capture) *Capture {
	if c != nil {
		return c
	}
	return &Capture{Profile: e.opts.Profile, Exclude: e.opts.Exclude, MaxFileSize: e.opts.MaxFileSize}
}

// saveStore is the save.Store an operation given c reads the workspace
// through: the Engine's for its own capture, otherwise one with c's walk
// rules, no watcher and a stat cache it only reads (see Capture).
func (e *Engine) saveStore(c *Capture) (*save.Store, error) {
	if e.sameCapture(c, nil) {
		return e.save, nil
	}
	if err := c.check(); err != nil { // a journal's, written by another version
		return nil, err
	}
	r := e.rules(c)
	st := *e.save
	st.Walk.Profile, st.Walk.Extra, st.Walk.MaxFileSize = r.Profile, r.Exclude, r.MaxFileSize
	st.Tracker = nil
	st.StatCacheReadOnly = true
	return &st, nil
}
