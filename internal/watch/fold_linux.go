package watch

// foldName is the key a directory's entry name is known by: Linux file
// systems are case-sensitive, so the name itself.
func foldName(name string) string { return name }
