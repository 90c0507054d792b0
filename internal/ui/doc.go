// Package ui serves the local timeline page of a checkpoint store: every
// task as a lane of checkpoints, diffs between any two checkpoints or a
// checkpoint and the live workspace, and restores with a dry-run
// confirmation and undo.
//
// The package knows nothing of the engine: it declares the Backend it needs
// and speaks in its own plain types, so the caller adapts whatever engine it
// holds (ckpt's own adapter is cmd/ckpt/uiengine; the tests here run the
// page against it). The page is hand-written HTML, CSS and JavaScript
// embedded in the binary; nothing is fetched from elsewhere.
//
// No file name is lost: a name that is not valid UTF-8 travels with its
// bytes in base64 beside it (path_base64, write_base64, ...; package
// lossless), and the page names such a file back to the server by them
// (?path_base64=, paths_base64 in a restore).
//
// Security model: the server binds loopback by default and every request
// must carry the per-start random token (in the URL of the first page load,
// then a cookie or the X-Ckpt-Token header), compared in constant time;
// requests without it get 403. The Host header must name the bound address
// or a loopback name, so a DNS-rebinding page cannot reach the server under
// its own name. Every state-changing request must be a POST with a JSON body
// and an Origin equal to the server's own, so no other page can trigger a
// restore.
package ui
