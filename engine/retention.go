package engine

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ckpt/ckpt/objects"
)

// RetentionPolicy says which checkpoints GC drops. A task's head is never
// dropped, whatever the policy; backup checkpoints are treated like saves.
// The zero value keeps everything.
//
// Dropping a checkpoint from the middle of a chain leaves the chain
// readable: the remaining checkpoints keep their ids, sequence numbers
// (@N) and Parent ids, so a Parent may name a dropped checkpoint. List,
// @N refs and id prefixes see only the remaining checkpoints; HEAD~N that
// walks onto a dropped checkpoint fails instead of reaching past it.
type RetentionPolicy struct {
	// KeepLast keeps at most the N highest-sequence checkpoints of each task
	// (plus its head); 0 means no limit.
	KeepLast int
	// MaxAge drops checkpoints older than this; 0 means no limit.
	MaxAge time.Duration
	// MaxSize bounds the store: after the per-task limits, the oldest
	// checkpoints of all tasks are dropped, one at a time, until the pack
	// bytes the remaining checkpoints reference fit in MaxSize (or only
	// heads are left). The index adds a little on top. 0 means no limit.
	MaxSize int64
}

// IsZero reports whether the policy keeps every checkpoint.
func (p RetentionPolicy) IsZero() bool { return p == RetentionPolicy{} }

func (p RetentionPolicy) validate() error {
	switch {
	case p.KeepLast < 0:
		return fmt.Errorf("%w: the number of checkpoints to keep must not be negative, not %d", ErrBadRequest, p.KeepLast)
	case p.MaxAge < 0:
		return fmt.Errorf("%w: the age limit must not be negative, not %v", ErrBadRequest, p.MaxAge)
	case p.MaxSize < 0:
		return fmt.Errorf("%w: the size limit must not be negative, not %d", ErrBadRequest, p.MaxSize)
	}
	return nil
}

// Store settings holding the default policy (index config keys).
const (
	configKeepLast = "gc.keep-last"
	configMaxAge   = "gc.max-age"
	configMaxSize  = "gc.max-size"
	// configAutoAfter records the pack bytes an automatic GC left, so that a
	// store whose heads alone exceed MaxSize is not collected on every save.
	configAutoAfter = "gc.auto-after"
)

// Retention returns the store's default retention policy (zero when none
// was set).
func (e *Engine) Retention(ctx context.Context) (RetentionPolicy, error) {
	p, err := e.retention()
	return p, translate(err, e.storeDir)
}

func (e *Engine) retention() (RetentionPolicy, error) {
	var p RetentionPolicy
	keep, err := e.configInt(configKeepLast)
	if err != nil {
		return p, err
	}
	age, err := e.configInt(configMaxAge)
	if err != nil {
		return p, err
	}
	size, err := e.configInt(configMaxSize)
	if err != nil {
		return p, err
	}
	p = RetentionPolicy{KeepLast: int(keep), MaxAge: time.Duration(age), MaxSize: size}
	return p, p.validate()
}

// SetRetention stores p as the default policy of GC and of the automatic
// collection a save runs once the store exceeds p.MaxSize. The change is
// one durable index commit.
func (e *Engine) SetRetention(ctx context.Context, p RetentionPolicy) error {
	return translate(e.setRetention(p), e.storeDir)
}

func (e *Engine) setRetention(p RetentionPolicy) error {
	if err := p.validate(); err != nil {
		return err
	}
	return e.commitConfig("retention policy", configKeepLast, strconv.Itoa(p.KeepLast),
		configMaxAge, strconv.FormatInt(int64(p.MaxAge), 10), configMaxSize, strconv.FormatInt(p.MaxSize, 10),
		configAutoAfter, "0")
}

// commitConfig sets store settings, given as key, value pairs, in one
// durable index commit under the write lock; what names them in an error.
func (e *Engine) commitConfig(what string, kv ...string) error {
	unlock, err := e.lockForWrite()
	if err != nil {
		return err
	}
	defer unlock()
	b := e.db.NewBatch()
	defer b.Close()
	for i := 0; i+1 < len(kv); i += 2 {
		b.SetConfig(kv[i], kv[i+1])
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("save %s: %w", what, err)
	}
	return nil
}

// configInt reads an integer setting; unset is 0, garbage is corruption.
func (e *Engine) configInt(key string) (int64, error) {
	v, ok, err := e.db.Config(key)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, objects.MarkCorrupt(fmt.Errorf("setting %s = %q is not a number", key, v))
	}
	return n, nil
}

// DroppedCheckpoint is a checkpoint GC removed, and the policy that did.
type DroppedCheckpoint struct {
	ID     ID
	Task   string
	Seq    uint64
	Time   time.Time
	Kind   CheckpointKind
	Reason string // "keep-last", "max-age" or "max-size"
}
