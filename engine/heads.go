package engine

import "context"

// Heads returns every task's head, keyed by task name: one index read per
// task, so a host can poll it cheaply to notice saves and restores made by
// other processes (Tasks, by contrast, reads every checkpoint and sizes
// what each task holds).
func (e *Engine) Heads(ctx context.Context) (map[string]ID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	names, err := e.db.Tasks()
	if err != nil {
		return nil, translate(err, e.storeDir)
	}
	heads := make(map[string]ID, len(names))
	for _, name := range names {
		head, ok, err := e.db.Task(name)
		if err != nil {
			return nil, translate(err, e.storeDir)
		}
		if ok {
			heads[name] = ID(head.Head)
		}
	}
	return heads, nil
}
