package brsmireceiver

import "github.com/heteroflow/heteroflow/receivers/internal/smireceiver"

// Config is the brsmi receiver's configuration: collection_interval,
// timeout, tool_path (replaces brsmi on PATH), env, and per-metric
// switches under metrics:. Validate is smireceiver.Config's.
type Config = smireceiver.Config
