package diffview

// Contents is what Describe loads of one change: the text of each side,
// nil for an absent side, for binary changes and for too-large ones
// (TooLarge set; see Options.MaxBytes and MaxLines). Callers take the
// path, status and sizes from the Change itself.
type Contents struct {
	Binary   bool
	TooLarge bool
	Before   *string
	After    *string
}

// Describe loads the contents of c. Both sides are loaded even when their
// blob is unchanged (a rename or mode change), so a side-by-side view can
// show the file. Loader errors are wrapped with %w.
func Describe(c Change, from, to BlobLoader, opts Options) (Contents, error) {
	opts = opts.withDefaults()
	ct, err := loadContents(c.beforePath(), c.Path, c.Before, c.After, from, to, opts)
	if err != nil {
		return Contents{}, err
	}
	out := Contents{Binary: ct.binary, TooLarge: ct.tooLarge}
	if !ct.binary && !ct.tooLarge {
		if c.Before != nil {
			s := string(ct.before)
			out.Before = &s
		}
		if c.After != nil {
			s := string(ct.after)
			out.After = &s
		}
	}
	return out, nil
}
