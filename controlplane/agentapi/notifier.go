package agentapi

import "sync"

// notifier wakes a node's waiting long-poll. Each node has a channel with a
// buffer of one: a poke while nobody waits is kept for the next poll, and
// several pokes collapse into one (the poll reads all open items anyway).
type notifier struct {
	mu   sync.Mutex
	ch   map[string]chan struct{}
	gone map[string]chan struct{} // closed when the node is revoked
}

func newNotifier() *notifier {
	return &notifier{ch: map[string]chan struct{}{}, gone: map[string]chan struct{}{}}
}

// Gone returns a channel closed once node is revoked: every poll of the
// node waits on it, where one poke wakes only one poll.
func (n *notifier) Gone(node string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.goneLocked(node)
}

func (n *notifier) goneLocked(node string) chan struct{} {
	c, ok := n.gone[node]
	if !ok {
		c = make(chan struct{})
		n.gone[node] = c
	}
	return c
}

// Revoke closes node's gone channel (once).
func (n *notifier) Revoke(node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := n.goneLocked(node)
	select {
	case <-c:
	default:
		close(c)
	}
}

func (n *notifier) channel(node string) chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	c, ok := n.ch[node]
	if !ok {
		c = make(chan struct{}, 1)
		n.ch[node] = c
	}
	return c
}

// Notify pokes node's channel without blocking.
func (n *notifier) Notify(node string) {
	select {
	case n.channel(node) <- struct{}{}:
	default:
	}
}

// C returns the channel a poll of node waits on.
func (n *notifier) C(node string) <-chan struct{} { return n.channel(node) }
