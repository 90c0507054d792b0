package remotesync

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/ckpt/ckpt/objects"
)

// CorruptError names a remote object that does not verify: bytes that do
// not match their name, a segment or head that does not decode, a record
// that does not match its id. It is marked with objects.ErrCorrupt; the
// engine reports it as damage of the remote rather than of the store.
type CorruptError struct {
	Key    string
	Reason string
	Err    error // the underlying verification error, if any
	// RolledBack: the remote's head is older than one this store saw
	// there (see checkSeen); the error matches ErrRolledBack too.
	RolledBack bool
}

// ErrRolledBack matches a CorruptError of a remote head older than one
// this store saw: the remote was emptied or restored from an older copy.
var ErrRolledBack = errors.New("remote rolled back")

func (e *CorruptError) Error() string {
	msg := fmt.Sprintf("remote object %s: %s", e.Key, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is objects.ErrCorrupt, or ErrRolledBack for
// a head rolled back.
func (e *CorruptError) Is(target error) bool {
	return target == objects.ErrCorrupt || e.RolledBack && target == ErrRolledBack
}

// Unwrap returns the cause, if any.
func (e *CorruptError) Unwrap() error { return e.Err }

func dataKey(h objects.ID) string { return "data/" + h.String() }
func metaKey(h objects.ID) string { return "meta/" + h.String() }

// Loc says where a blob's record lives on a remote: in data object Object
// at Offset, with the locator fields it had locally.
type Loc struct {
	Object objects.ID
	Offset int64
	Length uint32
	Flags  objects.Flags
	Size   int64
	Member uint32
}

// appendLoc appends l's encoding (see doc.go) to b.
func appendLoc(b []byte, l Loc) []byte {
	b = append(b, l.Object[:]...)
	b = binary.AppendUvarint(b, uint64(l.Offset))
	b = binary.AppendUvarint(b, uint64(l.Length))
	b = append(b, byte(l.Flags))
	b = binary.AppendUvarint(b, uint64(l.Size))
	return binary.AppendUvarint(b, uint64(l.Member))
}

// objectsLocator is l as the objects package describes a record, for
// DecodeRecord; Pack is meaningless.
func (l Loc) objectsLocator() objects.Locator {
	return objects.Locator{Offset: l.Offset, Length: l.Length, Flags: l.Flags, Size: l.Size, Member: l.Member}
}

// decoder reads the varint encodings of segments and locators; the first
// failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(reason string) {
	if d.err == nil {
		d.err = errors.New(reason)
	}
	d.b = nil
}

func (d *decoder) uvarint(limit uint64) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > limit {
		d.fail("malformed or out-of-range varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if uint64(len(d.b)) < n {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) id() objects.ID { return objects.ID(d.bytes(objects.IDSize)) }

func (d *decoder) loc() Loc {
	var l Loc
	if len(d.b) < objects.IDSize {
		d.fail("truncated locator")
		return l
	}
	l.Object = d.id()
	l.Offset = int64(d.uvarint(math.MaxInt64))
	l.Length = uint32(d.uvarint(math.MaxUint32))
	if f := d.bytes(1); len(f) == 1 {
		l.Flags = objects.Flags(f[0])
	}
	l.Size = int64(d.uvarint(math.MaxInt64))
	l.Member = uint32(d.uvarint(math.MaxUint32))
	return l
}

// decodeLoc decodes one locator that fills b exactly.
func decodeLoc(b []byte) (Loc, error) {
	d := decoder{b: b}
	l := d.loc()
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return l, d.err
}

// Head is the decoded head object of one task (doc.go).
type Head struct {
	Task     string   `json:"task"`
	Head     string   `json:"head"`
	LastSeq  uint64   `json:"last_seq"`
	TipSeq   uint64   `json:"tip_seq"`
	Tip      string   `json:"tip"`
	Segments []string `json:"segments"`
	Gen      uint64   `json:"gen"`
	Nonce    string   `json:"nonce"`
}

func encodeHead(h Head) ([]byte, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	h.Nonce = hex.EncodeToString(nonce[:])
	return json.Marshal(h)
}

// decodeHead parses and checks a head read from key for task.
func decodeHead(key, task string, b []byte) (Head, error) {
	var h Head
	bad := func(reason string) (Head, error) { return h, &CorruptError{Key: key, Reason: reason} }
	if err := json.Unmarshal(b, &h); err != nil {
		return bad("head does not decode: " + err.Error())
	}
	if h.Task != task {
		return bad(fmt.Sprintf("head names task %q, not %q", h.Task, task))
	}
	for _, s := range append([]string{h.Head, h.Tip}, h.Segments...) {
		if _, err := objects.ParseID(s); err != nil {
			return bad("head holds a malformed id")
		}
	}
	return h, nil
}

func (h Head) headID() objects.ID { id, _ := objects.ParseID(h.Head); return id }
func (h Head) tipID() objects.ID  { id, _ := objects.ParseID(h.Tip); return id }
