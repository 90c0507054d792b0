package ui

func browserCommand(url string) (string, []string) { return "open", []string{url} }
