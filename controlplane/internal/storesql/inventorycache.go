package storesql

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// inventoryCache keeps each node's last decoded inventory with the stored
// text it came from. The scheduler re-reads every node each NodeSync and
// every heartbeat returns its node, while an inventory changes only when
// devices do; decoding the JSON was most of the leader's CPU at 1,000
// nodes. An unchanged text reuses the decoded value, so every reader of
// that node shares it: Node.Inventory is read-only for callers. With the
// stored hash beside the text, a node list skips the text of every
// inventory the cache holds (lookup).
type inventoryCache struct {
	mu sync.Mutex
	m  map[string]cachedInventory
}

type cachedInventory struct {
	hash string // the stored inventory_hash ('' for rows from before it)
	raw  string
	inv  []inventory.Snapshot
}

// maxCachedInventories bounds the cache (entries of deleted nodes are
// never looked up again; past the bound the cache starts over).
const maxCachedInventories = 100_000

func newInventoryCache() *inventoryCache {
	return &inventoryCache{m: map[string]cachedInventory{}}
}

// lookup returns node id's decoded inventory if the cache holds it for
// hash (a list then need not read the text).
func (c *inventoryCache) lookup(id, hash string) ([]inventory.Snapshot, bool) {
	if hash == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.hash != hash {
		return nil, false
	}
	return e.inv, true
}

// decode returns the inventory stored as raw (with hash) for node id.
func (c *inventoryCache) decode(id, hash string, raw []byte) ([]inventory.Snapshot, error) {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && e.raw == string(raw) && e.hash == hash {
		return e.inv, nil
	}
	inv := e.inv
	if !ok || e.raw != string(raw) {
		inv = nil
		if err := json.Unmarshal(raw, &inv); err != nil {
			return nil, fmt.Errorf("node %s inventory: %w", id, err)
		}
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedInventories {
		clear(c.m)
	}
	c.m[id] = cachedInventory{hash: hash, raw: string(raw), inv: inv}
	c.mu.Unlock()
	return inv, nil
}
