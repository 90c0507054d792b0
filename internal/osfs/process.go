package osfs

// TerminationSignals are the signals that ask a ckpt process to stop:
// interrupt, SIGTERM and SIGHUP (unless ignored at start, as nohup does) on
// unix, interrupt (Ctrl-C, Ctrl-Break) on Windows.
var TerminationSignals = terminationSignals

// PrivateFiles makes the files and directories this process creates from
// now on private to its user (umask 077 on unix). On Windows, where new
// files inherit the parent directory's ACL, it does nothing; the store's
// location under the user's profile keeps it private.
func PrivateFiles() { privateFiles() }
