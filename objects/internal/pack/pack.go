package pack

// IDLen is the length of a blob id (objects.IDSize): a BLAKE3-256 digest.
const IDLen = 32

// Pack and record framing.
const (
	Magic     = "CKPTPACK"
	Version   = 2 // writers create and append to version-2 packs only
	Version1  = 1 // read-only: holds no group records
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

	// KnownFlags are every flag a record may carry.
	KnownFlags = FlagCompressed | FlagChunked | FlagGroup
)
