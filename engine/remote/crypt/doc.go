// Package crypt encrypts a remote on the client: Wrap turns a
// remote.Backend into one whose stored objects are sealed with
// XChaCha20-Poly1305 (golang.org/x/crypto/chacha20poly1305), and Key.Name
// gives callers object names that reveal nothing without the key.
//
// # Format
//
// An object of P plaintext bytes is stored as a 32-byte header followed by
// max(1, ⌈P/65536⌉) segments:
//
//	header  = "ckptenc\x01" (8 bytes) || object id (24 random bytes)
//	segment = nonce (24 random bytes) || XChaCha20-Poly1305 sealed plaintext (+16-byte tag)
//	ad(i)   = header || uint64 big-endian i || last (1 byte: 1 for the final segment, else 0) || object key
//
// Every segment but the last holds exactly 64 KiB of plaintext; the last
// holds 1 to 64 KiB, or nothing for an empty object, which still has one
// segment so that it too is authenticated. Segment i is sealed with the
// content key, a fresh random 192-bit nonce (random nonces of this size
// never repeat in practice, so no counter state is shared between
// clients) and ad(i) as associated data. So a segment opens only at its
// own position (the index), an object cannot lose its tail (the last
// flag), segments cannot move between objects or between two versions of
// one object (the object key and the random object id, authenticated
// through the header), and the header cannot be changed.
//
// The stored size is 32 + P + 40·segments, so the plaintext size follows
// from the stored size alone: Stat and List report plaintext sizes without
// reading, and a ranged read of plaintext bytes [off, off+n) fetches only
// segments ⌊off/64Ki⌋ to ⌊(off+n-1)/64Ki⌋ (and the header).
//
// # What is hidden and what is not
//
// Hidden from anyone without the key: the content of every object. And
// protected: its integrity. A flipped byte, a truncation, reordered
// segments, objects swapped between keys, or a wrong key is an error
// wrapping ErrAuth, never wrong bytes.
//
// Not hidden: object keys (Wrap stores them as given), each object's exact
// plaintext size (it follows from the stored size), the number of
// objects, and when and how often they are written and read. Callers name
// objects with Key.Name, a keyed hash, so that names leak nothing: an
// unkeyed hash of plaintext, such as a content address, would let anyone
// who can guess a content confirm that it is stored. An attacker who can
// write to the store can also delete objects, or put back an older sealed
// version of an object under its own key (a rollback); only a caller that
// knows what to expect detects that, as a name derived from the content
// does.
//
// # Keys
//
// A key is a 32-byte secret, from a key file (GenerateKeyFile writes 32
// random bytes as hex, 0600; LoadKeyFile reads hex or raw) or from a
// passphrase (PassphraseKey: argon2id with 3 passes over 64 MiB in 4
// lanes and a 16-byte random salt). Three values are derived from the
// secret with HKDF-SHA256: the content key, the key of Key.Name (keyed
// BLAKE3), so that a name never helps to open content, and a check value.
//
// The one object stored in the clear, ParamsKey, is JSON:
//
//	{"format": "ckpt-crypt-1", "kdf": "argon2id", "time": 3, "memory_kib": 65536,
//	 "threads": 4, "salt": base64, "check": base64}
//	{"format": "ckpt-crypt-1", "kdf": "none", "check": base64}      (a key file)
//
// The first client to use a remote creates it with a conditional put
// (CheckKey for a key file, PassphraseKey for a passphrase), so clients
// racing on a new remote agree on one salt and one key, and every later
// client with another key or passphrase gets ErrWrongKey before it reads
// or writes anything. The check value lets an attacker test a guessed
// passphrase no faster than any sealed object would. The package never
// stores or logs a key or passphrase, and never reads one from the
// environment: that is the caller's choice.
package crypt
