package engine

// fsHasModeBits: Windows file systems have no permission bits (only the
// read-only attribute), so saves carry modes from the base checkpoint.
const fsHasModeBits = false
