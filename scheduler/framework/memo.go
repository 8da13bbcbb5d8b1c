package framework

// memo caches, per request shape and node, the fused Filter+Assign+Score
// result. An entry is valid while the node's Version is the one stored and
// the table's epoch is the framework's (weights, plugins, inputs unchanged).
type memo struct {
	shapes map[string]*memoTable
}

type memoEntry struct {
	version uint64 // node version the entry was computed at; 0 = empty
	score   float64
	status  Status // Err is never memoised (errors are not node facts)
	plugin  int16  // index of the refusing filter plugin; -1 = Assign
}

type memoTable struct {
	epoch   uint64 // framework epoch
	cepoch  uint64 // cluster epoch (nodes joined)
	entries []memoEntry
}

// maxShapes bounds the memo (shapes × nodes entries); beyond it the memo is
// cleared and refilled with the shapes in current use.
const maxShapes = 2048

func (m *memo) table(key string, epoch, cepoch uint64, nodes int) *memoTable {
	if m.shapes == nil {
		m.shapes = map[string]*memoTable{}
	}
	t, ok := m.shapes[key]
	if !ok {
		if len(m.shapes) >= maxShapes {
			clear(m.shapes)
		}
		t = &memoTable{}
		m.shapes[key] = t
	}
	if t.epoch != epoch || t.cepoch != cepoch || len(t.entries) != nodes {
		if cap(t.entries) >= nodes {
			t.entries = t.entries[:nodes]
			clear(t.entries)
		} else {
			t.entries = make([]memoEntry, nodes)
		}
		t.epoch, t.cepoch = epoch, cepoch
	}
	return t
}
