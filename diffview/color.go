package diffview

// palette holds the ANSI sequences used for each element of the output;
// all fields are empty when colour is off.
type palette struct {
	meta, frag, old, new string
}

const ansiReset = "\x1b[m"

func newPalette(color bool) palette {
	if !color {
		return palette{}
	}
	return palette{meta: "\x1b[1m", frag: "\x1b[36m", old: "\x1b[31m", new: "\x1b[32m"}
}

// end returns the sequence that closes color ("" when color is "").
func (palette) end(color string) string {
	if color == "" {
		return ""
	}
	return ansiReset
}
