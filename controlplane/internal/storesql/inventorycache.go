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
// that node shares it: Node.Inventory is read-only for callers.
type inventoryCache struct {
	mu sync.Mutex
	m  map[string]cachedInventory
}

type cachedInventory struct {
	raw string
	inv []inventory.Snapshot
}

// maxCachedInventories bounds the cache (entries of deleted nodes are
// never looked up again; past the bound the cache starts over).
const maxCachedInventories = 100_000

func newInventoryCache() *inventoryCache {
	return &inventoryCache{m: map[string]cachedInventory{}}
}

// decode returns the inventory stored as raw for node id.
func (c *inventoryCache) decode(id string, raw []byte) ([]inventory.Snapshot, error) {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok && e.raw == string(raw) {
		return e.inv, nil
	}
	var inv []inventory.Snapshot
	if err := json.Unmarshal(raw, &inv); err != nil {
		return nil, fmt.Errorf("node %s inventory: %w", id, err)
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedInventories {
		clear(c.m)
	}
	c.m[id] = cachedInventory{raw: string(raw), inv: inv}
	c.mu.Unlock()
	return inv, nil
}
