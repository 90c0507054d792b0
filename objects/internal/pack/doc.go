// Package pack is the byte format of ckpt's pack files, which package
// objects writes and reads: the sizes, magics, versions and flags of packs,
// records, chunk lists and groups. It is the specification for readers of
// the files; what a user of the store needs is objects' API.
//
// # Pack format (version 3)
//
// All integers are little-endian. A pack is a 12-byte header followed by
// records, back to back:
//
//	pack header:
//	  [8]  magic "CKPTPACK"
//	  [4]  version = 3 (packs written before delta records existed say 2,
//	       before group records existed 1; see below)
//	record (53-byte header + payload):
//	  [4]  magic "CKRB"
//	  [1]  flags: bit 0 = compressed (payload is zstd frames), bit 1 = chunked
//	       (payload is a chunk list), bit 2 = group (payload holds several
//	       blobs), bit 3 = delta (payload decodes against another blob);
//	       other bits must be 0; chunked and delta each exclude every other
//	  [32] id: BLAKE3-256 of the raw content (of the whole file when chunked,
//	       of the decoded payload for a group)
//	  [8]  size: raw content length (of the whole file when chunked, of the
//	       decoded payload for a group)
//	  [4]  payload length in bytes, at most 2^30
//	  [4]  header check: CRC-32C (Castagnoli) of the 49 bytes above
//	  [payload length] payload
//
// A plain record's payload is the raw content (flags 0, payload length =
// size) or a zstd frame that decodes to exactly size bytes. Compressed
// frames carry no zstd checksum: the BLAKE3 id verifies the content, and
// the header check guards only the framing (lengths, flags), which must be
// trusted before the payload can be located or decoded. A payload is
// stored raw when zstd would save less than 1/32 of it.
//
// A chunked record's payload is the chunk list of a large file, never
// compressed: one 36-byte entry per chunk, in file order,
//
//	[32] chunk id   [4] chunk length (1..64 MiB)
//
// whose lengths add up to the record's size. Each chunk is a plain record
// of its own (possibly in another pack), found through the index, so equal
// chunks of different files, or of two versions of one file, are stored
// once. Chunk boundaries are content-defined (a gear rolling hash with
// normalized chunking; minimum 512 KiB, average about 1 MiB, maximum
// 8 MiB), so an edit in the middle of a large file changes only the chunks
// around it.
//
// # Group records
//
// A group record (flag bit 2, plus bit 0 when its payload is compressed)
// stores small blobs together, so that a frame sees what similar files
// share. Its decoded payload is
//
//	[4]  member count N (1..4096)
//	N ×  [32] member id (BLAKE3-256 of its content)   [4] member length
//	     the members' contents, back to back, in table order
//
// whose member lengths add up to the content's length. With objects.Options.Groups,
// an objects.Batch puts every blob of at most 1 MiB (a whole file or a chunk) into its open group and
// writes the group once it holds 1 MiB, or at Sync; a group decodes to at
// most 1 MiB + 1 MiB + the table. A compressed group payload is one or
// more zstd frames back to back, each of which decodes alone and declares
// its decoded length (a payload's only frame need not): the writer cuts
// one frame per 256 KiB of the decoded payload, the last up to 384 KiB
// (groups written before frames were cut are one frame). Reading one
// member reads its one group record, finds the frames from their headers,
// and decodes only the frames holding the table and the member, each only
// as far as needed (the table, then the member's frame up to its end: an
// eighth of a group on average), checks the table against the group's
// length and the member's content against its table id, so every byte
// returned is verified. The group's own id is
// checked where a record is taken in whole: one fetched from a remote,
// copied by a collection (objects.Store.Rewrite), or checked by verify
// (objects.ReadSession.CheckGroup).
//
// The members of a group share its Offset and Length, so a caller that
// sums objects.Locator.Length per blob (live bytes per pack, bytes a task holds
// alone) must count each record once. A collection copies a group whole
// the first time one of its members is copied, or instead reads one member
// and writes it into a new group with the others regrouped alongside, so
// it keeps only the live members of a mostly dead group
// (objects.Store.GroupShare, read from the record header, tells how much
// of a group its live members are).
//
// # Delta records
//
// A delta record (flag bit 3 alone) stores a blob against the delta's
// base: another blob of the store, of at most 1 MiB and not chunked,
// either the previous version of the same file or (written by a rewrite) a
// similar file. Its id and size are those of the content
// whole, and its payload is
//
//	[32] base id (BLAKE3-256 of the base's content)
//	[1]  depth: 1 + the base's depth (a record that is not a delta has
//	     depth 0), at most MaxDeltaDepth
//	     one zstd frame with the base's content as its raw dictionary
//	     (dictionary id 0, as zstd --patch-from writes), decoding to
//	     exactly size bytes, at most 1 MiB
//
// A reader finds the base through the index by its id, reads it (through
// its own chain, at most depth-1 deep, so a read loads at most depth+1
// records and a damaged depth cannot loop), decodes the frame against it
// and checks the content against the delta's id, as for any record. An
// objects.Batch writes one only for a blob it is told is a new version of
// another (objects.Batch.PutVersion), of 512 bytes to 1 MiB, when the
// record is clearly smaller than the content stored whole (16 times
// smaller than the content, else three quarters of its own compressed
// frame at most), and only while the base's depth is under MaxDeltaDepth:
// the next version after a chain's last is stored whole and starts a new
// chain. Deferred batches write none. A rewrite (objects.Store.Rewrite)
// writes one for a blob it moves out of a deferred pack when it is offered
// a similar blob stored whole that no rewrite will turn into a delta
// (objects.Move.Bases), by the same rule; its depth is always 1.
//
// A delta's base must stay stored while the delta is: a collection counts
// a live delta's base as live, as it counts a chunked file's chunks
// (objects.Store.DeltaBase reads the base's id from the record), and may
// copy the delta as it is or rewrite it whole (MoveRecompress,
// MoveRegroup), which a later delta on top of it then reads at a depth
// below the one it recorded (a recorded depth is an upper bound). A copy
// of a record kept outside the store (a remote's data objects, read back
// with objects.Store.DecodeRecord and objects.Batch.PutRecord) is never a
// delta: objects.Store.WholeRecord gives a delta's content as a record of
// its own, and DecodeRecord refuses a delta record.
//
// # Older versions
//
// Version 1 packs (written before group records existed) hold no group
// records, and version 2 packs (written before delta records existed) no
// delta records; both are read as before, and writers never append to
// them (a new pack is started instead), so a pack's version says what it
// may hold, and a version-2 reader refuses a version-3 pack rather than
// misread a delta.
//
// # Deferred packs
//
// An objects.Batch with DeferCompression stores every record uncompressed (flags
// without bit 0) and, before its Sync returns placements, creates an empty
// marker DIR/packs/NNNNNNNN.raw (mode 0600) beside each pack it wrote and
// fsyncs the directory: a committed locator never points into an unmarked
// deferred pack. A marked pack is an ordinary pack of this format (other
// batches may append compressed records to it); the marker only asks a
// collection to rewrite it, regrouping small blobs and recompressing large
// ones at objects.Options.RecompressLevel. objects.Store.RemovePack
// removes the marker before the pack;
// a marker whose pack is gone is ignored.
//
// # Locator encoding
//
// objects.Locator.AppendBinary writes a version byte, the flags byte, then pack
// number, record offset, record length (header included) and size as
// unsigned varints. The version byte is 1 for a record of its own and 2 for
// a group member, whose encoding ends with one more varint, the member's
// index in its group (objects.Locator.Member); its Size is the member's length.
// objects.Locator.Length covers the whole record, so a reader fetches a record with
// one pread; the members of a group share its Offset and Length.
package pack
