package osfs

func nameProblem(name string) string { return WindowsNameProblem(name) }
