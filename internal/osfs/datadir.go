package osfs

// UserDataDir is where the user's application data lives by the platform's
// convention: $XDG_DATA_HOME (default ~/.local/share) on Linux and other
// unixes, ~/Library/Application Support on macOS, %LOCALAPPDATA% on
// Windows. It fails when neither the variable nor a home directory is known.
func UserDataDir() (string, error) { return userDataDir() }
