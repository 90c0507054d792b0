package watch

// backendDone is closed when w's run loop thread has returned.
func backendDone(w *Watcher) <-chan struct{} { return w.b.(*fsevents).done }
