package index

import (
	"slices"
	"sync"
)

// memo keeps records already read from or committed to the index, by key,
// for as long as a budget allows (the oldest go first), so that the
// resident engine's saves, diffs and restores read the records they
// share once. It follows the index: what a committed Batch writes
// replaces what it held for the key, what the batch deletes leaves it,
// and a read that began before a commit (it may have read a record the
// commit changed) enters it only if no commit came in between
// (putUnlessChanged). Safe for concurrent use; the values it holds are
// never modified.
type memo[K comparable, V any] struct {
	cost   func(V) int // of one value; at least 1
	budget int

	mu    sync.Mutex
	vals  map[K]memoVal[V]
	order []memoSlot[K] // puts, oldest first, from head
	head  int
	next  uint64 // seq of the last put
	gen   uint64 // commits followed so far
	total int    // cost of the values held
}

type memoVal[V any] struct {
	v   V
	seq uint64 // of the put that made it
}

// memoSlot is one put in order: evicting it drops the value only if no
// later put replaced it.
type memoSlot[K comparable] struct {
	key K
	seq uint64
}

func newMemo[K comparable, V any](budget int, cost func(V) int) *memo[K, V] {
	return &memo[K, V]{cost: cost, budget: budget, vals: map[K]memoVal[V]{}}
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	x, ok := m.vals[k]
	return x.v, ok
}

// read answers k from the memo, or else with load, keeping what load found
// unless a commit was followed meanwhile (putUnlessChanged).
func (m *memo[K, V]) read(k K, load func() (V, bool, error)) (V, bool, error) {
	m.mu.Lock()
	x, ok := m.vals[k]
	gen := m.gen
	m.mu.Unlock()
	if ok {
		return x.v, true, nil
	}
	v, found, err := load()
	if found && err == nil {
		m.putUnlessChanged(gen, k, v)
	}
	return v, found, err
}

// putUnlessChanged records v, read from the index, unless a commit was
// followed since gen, the count of commits followed when the read began.
func (m *memo[K, V]) putUnlessChanged(gen uint64, k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen == gen {
		m.putLocked(k, v)
	}
}

// memoWrites is what follow's caller applies: put records a value,
// drop forgets a key, dropWhere forgets every key held that match
// selects (a range deletion; it costs a pass over the memo).
type memoWrites[K comparable, V any] struct {
	put       func(K, V)
	drop      func(K)
	dropWhere func(match func(K) bool)
}

// follow applies one committed Batch's writes to the memo: under its lock
// (so no read sees half of them) apply calls w's functions in the batch's
// order.
func (m *memo[K, V]) follow(apply func(w memoWrites[K, V])) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	apply(memoWrites[K, V]{put: m.putLocked, drop: m.remove, dropWhere: m.removeWhere})
}

// clear forgets everything, as a commit would that wrote every key.
func (m *memo[K, V]) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	clear(m.vals)
	m.order, m.head, m.total = nil, 0, 0
}

// putLocked records v under k, replacing what the memo held; a value
// over the whole budget is not kept.
func (m *memo[K, V]) putLocked(k K, v V) {
	m.remove(k)
	c := m.cost(v)
	if c > m.budget {
		return
	}
	m.next++
	m.vals[k] = memoVal[V]{v: v, seq: m.next}
	m.order = append(m.order, memoSlot[K]{key: k, seq: m.next})
	m.total += c
	for m.total > m.budget {
		if s := m.order[m.head]; m.live(s) {
			m.remove(s.key)
		}
		m.head++
	}
	// Evicted slots (before head) and slots of replaced or dropped values
	// are kept no longer than it takes live ones to outnumber them; the
	// live ones move to the front of the same array, so that it stays a
	// few times the size of the memo however many puts it saw.
	if m.head > len(m.order)/2 || len(m.order)-m.head > 2*len(m.vals)+64 {
		live := slices.DeleteFunc(m.order[m.head:], func(s memoSlot[K]) bool { return !m.live(s) })
		m.order = m.order[:copy(m.order, live)]
		m.head = 0
	}
}

// live reports whether slot s is still the put of the value it names.
func (m *memo[K, V]) live(s memoSlot[K]) bool {
	x, ok := m.vals[s.key]
	return ok && x.seq == s.seq
}

// remove forgets k; its slots stay in order until evicted, where they no
// longer match.
func (m *memo[K, V]) remove(k K) {
	if x, ok := m.vals[k]; ok {
		m.total -= m.cost(x.v)
		delete(m.vals, k)
	}
}

func (m *memo[K, V]) removeWhere(match func(K) bool) {
	for k := range m.vals {
		if match(k) {
			m.remove(k)
		}
	}
}
