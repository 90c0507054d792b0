package diffview

// FileJSON is the JSON form of one change (the "files" items of
// `ckpt diff --json`). Before and After hold the text of each side; they are
// null for an absent side, for binary changes and for too-large ones
// (TooLarge set; see Options.MaxBytes and MaxLines). Text is carried as a
// Go string, so encoding/json replaces bytes that are not valid UTF-8 with
// U+FFFD. Absolute is left for the caller to fill in.
type FileJSON struct {
	Path       string  `json:"path"`
	Absolute   string  `json:"absolute"`
	Status     Status  `json:"status"`
	OldPath    string  `json:"old_path,omitempty"`
	Binary     bool    `json:"binary"`
	Before     *string `json:"before"`
	After      *string `json:"after"`
	BeforeSize int64   `json:"before_size"`
	AfterSize  int64   `json:"after_size"`
	TooLarge   bool    `json:"too_large,omitempty"`
}

// Describe loads the contents of c and returns its JSON form. Both sides
// are loaded even when their blob is unchanged (a rename or mode change),
// so a side-by-side view can show the file. Loader errors are wrapped with
// %w.
func Describe(c Change, from, to BlobLoader, opts Options) (FileJSON, error) {
	opts = opts.withDefaults()
	ct, err := loadContents(c.beforePath(), c.Path, c.Before, c.After, from, to, opts)
	if err != nil {
		return FileJSON{}, err
	}
	fj := FileJSON{Path: c.Path, Status: c.Status, OldPath: c.OldPath, Binary: ct.binary, TooLarge: ct.tooLarge}
	if c.Before != nil {
		fj.BeforeSize = c.Before.Size
		if !ct.binary && !ct.tooLarge {
			s := string(ct.before)
			fj.Before = &s
		}
	}
	if c.After != nil {
		fj.AfterSize = c.After.Size
		if !ct.binary && !ct.tooLarge {
			s := string(ct.after)
			fj.After = &s
		}
	}
	return fj, nil
}
