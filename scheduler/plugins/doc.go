// Package plugins holds the built-in scheduler plugins, one small file each
// (STYLE.md, kube-scheduler's noderesources): a compile-time interface
// check, validated args in the constructor, a pure scoring function at the
// bottom. Registry() lists every built-in in one literal.
//
//	ResourceFit   Filter + Assign  host CPU/memory; per-device memory MiB and
//	                               compute % (decoupled from device count);
//	                               QoS isolation via model.FitDevice
//	GPUType       PreFilter+Filter vendor/model include/exclude (gpu_spec)
//	RDMA          Filter + Score   InfiniBand/RoCE nodes for tasks that ask;
//	                               keeps them for those tasks otherwise
//	Topology      Score            NVLink/HCCS/xGMI-linked, one-NUMA device sets;
//	                               for RDMA tasks, devices near an active adapter
//	BinPack       Score            most-allocated, node or device level
//	Spread        Score            least-allocated, node or device level
//	BestFit       Score            the FGD paper's best-fit baseline formula
//	Random        Score            uniform random (baseline; Volatile)
//	Fragmentation Assign + Score   FGD-class: least growth of expected
//	                               unusable capacity for the target workload
//	Audit         Audit            every decision with its scores, to slog
package plugins
