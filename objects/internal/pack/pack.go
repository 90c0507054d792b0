package pack

// IDLen is the length of a blob id (objects.IDSize): a BLAKE3-256 digest.
const IDLen = 32

// Pack and record framing.
const (
	Magic     = "CKPTPACK"
	Version   = 3 // writers create and append to version-3 packs only
	Version2  = 2 // read-only: holds no delta records
	Version1  = 1 // read-only: holds no group or delta records
	HeaderLen = len(Magic) + 4

	RecordMagic     = "CKRB"
	RecordHeaderLen = 4 + 1 + IDLen + 8 + 4 + 4

	ChunkEntryLen = IDLen + 4

	// MaxPayload bounds a record's stored payload. Plain blobs are at most
	// objects' largest chunk; chunk lists of files up to a few TiB fit.
	MaxPayload = 1 << 30
)

// Group payload framing: a member count, then one table entry per member.
const (
	GroupMaxMembers = 4096
	GroupHeadLen    = 4 // the member count
	GroupEntryLen   = IDLen + 4
)

// Flags describe how a record's payload is stored.
type Flags uint8

const (
	// FlagCompressed marks a payload stored as one zstd frame.
	FlagCompressed Flags = 1 << iota
	// FlagChunked marks a payload that is the chunk list of a large file;
	// the chunks are blobs of their own.
	FlagChunked
	// FlagGroup marks a group record: the payload (zstd-compressed when
	// FlagCompressed is also set) holds several small blobs, and a
	// locator with this flag names one of them by its member index.
	FlagGroup

	// FlagDelta marks a delta record: the payload names a base blob and
	// holds a zstd frame that decodes to the content with the base's
	// content as its dictionary. It is never combined with another flag.
	FlagDelta

	// KnownFlags are every flag a record may carry.
	KnownFlags = FlagCompressed | FlagChunked | FlagGroup | FlagDelta
)

// Delta payload framing: the base's id and the delta's depth, then the
// zstd frame.
const (
	DeltaHeadLen = IDLen + 1
	// MaxDeltaDepth bounds a chain of deltas: a delta's depth is its
	// base's plus one (a record that is not a delta has depth 0), so a
	// read of a blob loads at most MaxDeltaDepth+1 records.
	MaxDeltaDepth = 12
)

// MinVersion returns the first pack version that may hold a record with
// the given flags.
func MinVersion(f Flags) uint32 {
	switch {
	case f&FlagDelta != 0:
		return Version
	case f&FlagGroup != 0:
		return Version2
	}
	return Version1
}
