package protocol

import (
	"bytes"
	"fmt"

	"github.com/ckpt/ckpt/engine"
	"github.com/ckpt/ckpt/internal/jsonrpc"
)

// EncodeDiff returns DiffView(res, format) encoded as JSON on one line,
// without HTML escapes: the bytes encoding/json gives for it, without the
// final newline. Each change is encoded on the core that loaded its
// sides, as soon as it has (engine.DiffResult.EachFile), so the encoding
// of a diff whose files are megabytes of text runs beside their loading
// instead of after it, on one core.
func EncodeDiff(res *engine.DiffResult, format engine.DiffFormat) ([]byte, error) {
	view, err := encodeDiff(res, format, nil)
	return view.encoded, err
}

// encodeDiff is the view of res (DiffView's, each change completed by
// complete when set, on the core that loaded it) together with its
// encoding (EncodeDiff's), which the view keeps for EncodedJSON.
func encodeDiff(res *engine.DiffResult, format engine.DiffFormat, complete func(c engine.Change, f *FileJSON) error) (DiffJSON, error) {
	head := diffHead(res)
	head.Files = []FileJSON{}
	doc, err := jsonrpc.Marshal(head)
	if err != nil {
		return DiffJSON{}, err
	}
	view := head
	view.Files = make([]FileJSON, len(res.Changes))
	files := make([][]byte, len(res.Changes))
	err = res.EachFile(format, func(i int, f engine.FileDiff) error {
		v := fileView(f)
		if complete != nil {
			if err := complete(res.Changes[i], &v); err != nil {
				return err
			}
		}
		view.Files[i] = v
		var err error
		files[i], err = jsonrpc.Marshal(v)
		return err
	})
	if err != nil {
		return DiffJSON{}, err
	}
	// Files is the shape's last field: the head ends with its empty array.
	open, ok := bytes.CutSuffix(doc, []byte("[]}"))
	if !ok {
		return DiffJSON{}, fmt.Errorf("diff head encoded as %q", doc)
	}
	n := len(open) + len("[]}") + len(files)
	for _, f := range files {
		n += len(f)
	}
	out := append(make([]byte, 0, n), open...)
	out = append(out, '[')
	for i, f := range files {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, f...)
	}
	view.encoded = append(out, "]}"...)
	return view, nil
}

// EncodedJSON is the view's encoding when it was made with it (the diff
// method's result: see jsonrpc.Encoded), nil otherwise.
func (d DiffJSON) EncodedJSON() []byte { return d.encoded }
