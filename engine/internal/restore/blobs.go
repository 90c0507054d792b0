package restore

import "github.com/ckpt/ckpt/objects"

// Blobs lists the blobs the plan writes: file contents and symlink
// targets, each once.
func (p *Plan) Blobs() []objects.ID {
	seen := map[objects.ID]bool{}
	var ids []objects.ID
	for _, o := range p.writes {
		if (o.kind == opWrite || o.kind == opLink) && !seen[o.ent.ID] {
			seen[o.ent.ID] = true
			ids = append(ids, o.ent.ID)
		}
	}
	return ids
}
