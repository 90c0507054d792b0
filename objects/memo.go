package objects

import (
	"slices"
	"sync"
)

// memo keeps byte slices by key in memory, at most maxEntries of them and
// maxBytes in all, the oldest dropped first to make room. Safe for
// concurrent use; a slice put in it is its own and never changed.
type memo[K comparable] struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	byKey map[K][]byte
	order []K // insertion order; keys taken since stay until dropped
	bytes int
}

func newMemo[K comparable](maxEntries, maxBytes int) *memo[K] {
	return &memo[K]{maxEntries: maxEntries, maxBytes: maxBytes, byKey: map[K][]byte{}}
}

// put keeps value for key, unless key is kept already or value alone is
// over the memo's bytes.
func (m *memo[K]) put(key K, value []byte) {
	if len(value) > m.maxBytes {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[key]; ok {
		return
	}
	for len(m.order) > 0 && (len(m.byKey) >= m.maxEntries || m.bytes+len(value) > m.maxBytes) {
		old := m.order[0]
		m.order = m.order[1:]
		if dropped, ok := m.byKey[old]; ok {
			m.bytes -= len(dropped)
			delete(m.byKey, old)
		}
	}
	if len(m.order) >= 2*m.maxEntries { // mostly keys taken since: keep those still held
		m.order = slices.DeleteFunc(m.order, func(k K) bool { _, held := m.byKey[k]; return !held })
	}
	m.byKey[key] = value
	m.order = append(m.order, key)
	m.bytes += len(value)
}

// take removes and returns the value kept for key; ok is false when there
// is none.
func (m *memo[K]) take(key K) (value []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	value, ok = m.byKey[key]
	if ok {
		delete(m.byKey, key)
		m.bytes -= len(value)
	}
	return value, ok
}

// get returns the value kept for key, which stays kept; the caller must
// not change it.
func (m *memo[K]) get(key K) (value []byte, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	value, ok = m.byKey[key]
	return value, ok
}

func (m *memo[K]) has(key K) bool {
	_, ok := m.get(key)
	return ok
}
