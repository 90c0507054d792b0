package protocol

import "strings"

// envNamesEqual compares environment variable names as Windows does.
func envNamesEqual(a, b string) bool { return strings.EqualFold(a, b) }
