package crypt

// chunks is a reader of the chunks that produce makes, one after another,
// until produce reports io.EOF or an error; an error is sticky. It is how
// the sealer and the opener yield one segment at a time.
type chunks struct {
	produce func() ([]byte, error)
	pending []byte // the part of the last chunk not yet read
	err     error
}

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		c.pending, c.err = c.produce()
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
