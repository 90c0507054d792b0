//go:build !windows

package osfs

func nameProblem(string) string { return "" }
