package plugins

import "github.com/heteroflow/heteroflow/scheduler/framework"

// Plugin names.
const (
	NameResourceFit   = "ResourceFit"
	NameGPUType       = "GPUType"
	NameRDMA          = "RDMA"
	NameTopology      = "Topology"
	NameBinPack       = "BinPack"
	NameSpread        = "Spread"
	NameBestFit       = "BestFit"
	NameRandom        = "Random"
	NameFragmentation = "Fragmentation"
	NameAudit         = "Audit"
)

// Registry returns every built-in plugin.
func Registry() framework.Registry {
	return framework.Registry{
		NameResourceFit:   NewResourceFit,
		NameGPUType:       NewGPUType,
		NameRDMA:          NewRDMA,
		NameTopology:      NewTopology,
		NameBinPack:       NewBinPack,
		NameSpread:        NewSpread,
		NameBestFit:       NewBestFit,
		NameRandom:        NewRandom,
		NameFragmentation: NewFragmentation,
		NameAudit:         NewAudit,
	}
}
