-- Node lists without the inventories they already have: each node carries a
-- hash of its stored inventory, written with the inventory (enrollment, a
-- heartbeat that reports a changed inventory). A reader that holds the
-- decoded inventory for that hash skips the column; the scheduler re-reads
-- every node each second, and at 5,000 nodes the inventories were most of
-- that read. '' (rows from before): no hash, the inventory is read as before
-- until the node's next inventory write.

-- +goose Up
ALTER TABLE nodes ADD COLUMN inventory_hash TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE nodes DROP COLUMN inventory_hash;
