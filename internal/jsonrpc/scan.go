package jsonrpc

import "bytes"

// ReplyIDs are the ids of the replies on a line a server sent (one message
// or a batch): the raw "id" of every object without a "method". It reads
// the line once without decoding it: a reply may be megabytes on one line
// (a diff's carries both sides of every changed file). A line that is not
// a JSON object or array of objects yields what was found before the
// point where it stopped making sense; a Conn's lines are its encoder's.
func ReplyIDs(line []byte) []string {
	s := jsonScan{b: line}
	var ids []string
	object := func() bool {
		id, method, ok := s.object()
		if ok && id != nil && string(id) != "null" && !method {
			ids = append(ids, string(id))
		}
		return ok
	}
	if !s.next('[') {
		object()
		return ids
	}
	for s.i++; object() && s.next(','); s.i++ {
	}
	return ids
}

// jsonScan walks JSON text without decoding or checking it: it finds
// where each value ends, jumping from one quote, backslash or bracket to
// the next, several times faster than a decoder's byte-by-byte scan.
type jsonScan struct {
	b []byte
	i int
}

// next skips white space and reports whether c comes next.
func (s *jsonScan) next(c byte) bool {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
	return s.i < len(s.b) && s.b[s.i] == c
}

// object walks the object that comes next and returns its "id" member's
// raw value and whether it has a "method" member.
func (s *jsonScan) object() (id []byte, method, ok bool) {
	if !s.next('{') {
		return nil, false, false
	}
	s.i++
	if s.next('}') {
		s.i++
		return nil, false, true
	}
	for {
		key, ok := s.value()
		if !ok || !s.next(':') {
			return nil, false, false
		}
		s.i++
		v, ok := s.value()
		if !ok {
			return nil, false, false
		}
		switch string(key) {
		case `"id"`:
			id = v
		case `"method"`:
			method = true
		}
		if s.next('}') {
			s.i++
			return id, method, true
		}
		if !s.next(',') {
			return nil, false, false
		}
		s.i++
	}
}

// value walks the value that comes next and returns its text.
func (s *jsonScan) value() ([]byte, bool) {
	s.next(0)
	start := s.i
	if s.i >= len(s.b) {
		return nil, false
	}
	switch s.b[s.i] {
	case '"':
		if !s.str() {
			return nil, false
		}
	case '{', '[':
		if !s.nested() {
			return nil, false
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && bytes.IndexByte([]byte(",}] \t\r\n"), s.b[s.i]) < 0 {
			s.i++
		}
	}
	return s.b[start:s.i], s.i > start
}

// str walks the string that starts at s.i.
func (s *jsonScan) str() bool {
	for s.i++; s.i < len(s.b); {
		k := bytes.IndexAny(s.b[s.i:], `"\`)
		switch {
		case k < 0:
			return false
		case s.b[s.i+k] == '\\':
			s.i += k + 2
		default:
			s.i += k + 1
			return true
		}
	}
	return false
}

// nested walks the object or array that starts at s.i.
func (s *jsonScan) nested() bool {
	depth := 0
	for s.i < len(s.b) {
		k := bytes.IndexAny(s.b[s.i:], `"{}[]`)
		if k < 0 {
			return false
		}
		s.i += k
		switch s.b[s.i] {
		case '"':
			if !s.str() {
				return false
			}
			continue
		case '{', '[':
			depth++
		default:
			depth--
		}
		s.i++
		if depth == 0 {
			return true
		}
	}
	return false
}
