package vendorcatalog

// entries is the vendor table. Why each device id: NVIDIA takes UUIDs (MIG
// UUIDs for MIG instances) because MPS and MIG renumber indices; Ascend takes
// the Chip Logic ID from `npu-smi info -m` (not the NPU ID), or the id of a
// created vNPU; the others take the vendor's logical index as its CLI prints
// it. AMD sets only HIP_VISIBLE_DEVICES: ROCR_VISIBLE_DEVICES as well would
// filter twice and HIP would then index into the already-filtered set.
var entries = []Entry{
	{ID: NVIDIA, Name: "NVIDIA",
		CLIs:        []CLI{{Name: "nvidia-smi", Forms: []string{"xml", "csv", "list", "topo", "mig", "table"}}},
		ProcessVars: []string{"CUDA_VISIBLE_DEVICES"}, ContainerVar: "NVIDIA_VISIBLE_DEVICES", DeviceID: IDUUID,
		NodeGlobs:    []string{"/dev/nvidia[0-9]*"},
		ControlNodes: []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"},
		Container:    ContainerHints{Runtime: "nvidia-container-toolkit", GPUFlag: true, CDIKind: "nvidia.com/gpu"},
		// MPS: nvidia-cuda-mps-control; HAMi-core: libvgpu.so preloaded.
		DriverLimits: []string{DriverHAMiCore, DriverMPS}, Sharing: true, SilverOneDevice: []string{DriverMPS},
		SilverTools: map[string]string{DriverMPS: "nvidia-cuda-mps-control"}, CollectiveHCAVar: "NCCL_IB_HCA",
		// HAMi-core's install path (its device plugin mounts it there), then
		// the usual library directories.
		SilverLibs: map[string][]string{DriverHAMiCore: {"/usr/local/vgpu/libvgpu.so", "/usr/local/lib/libvgpu.so",
			"/usr/lib/x86_64-linux-gnu/libvgpu.so", "/usr/lib64/libvgpu.so"}},
		Hardware: "mig", Models: nvidiaMIGModels},
	{ID: AMD, Name: "AMD",
		CLIs:        []CLI{{Name: "rocm-smi", Forms: []string{"json", "table", "kv"}}},
		ProcessVars: []string{"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}, ContainerVar: "AMD_VISIBLE_DEVICES",
		DeviceID: IDIndex, NodeGlobs: []string{"/dev/kfd"}, ControlNodes: []string{"/dev/kfd", "/dev/dri"},
		Container: ContainerHints{GroupAdd: []string{"video"}},
		// HAMi AMD vGPU: HIP_DEVICE_MEMORY_LIMIT, HSA_CU_MASK.
		DriverLimits: []string{DriverHAMiCore}, Sharing: true, CollectiveHCAVar: "NCCL_IB_HCA"}, // RCCL
	{ID: Hygon, Name: "Hygon DCU",
		CLIs:        []CLI{{Name: "hy-smi", Paths: []string{"/opt/hyhal/bin/hy-smi"}, Forms: []string{"json", "table", "kv"}}},
		ProcessVars: []string{"HIP_VISIBLE_DEVICES"}, ContainerVar: "HYGON_VISIBLE_DEVICES", DeviceID: IDPartitionOrIndex,
		NodeGlobs: []string{"/dev/mkfd"}, ControlNodes: []string{"/dev/kfd", "/dev/dri", "/dev/mkfd"},
		Container: ContainerHints{GroupAdd: []string{"video"}},
		// vDCU: hy-smi virtual -create-vdevices (compute units + memory).
		DriverLimits: []string{DriverHAMiCore}, Sharing: true, Hardware: "vdcu", CollectiveHCAVar: "NCCL_IB_HCA"}, // RCCL
	{ID: Ascend, Name: "Huawei Ascend",
		CLIs: []CLI{{Name: "npu-smi", Paths: []string{"/usr/local/sbin/npu-smi"},
			Forms: []string{"info", "map", "board", "common", "usages"}}},
		ProcessVars: []string{"ASCEND_RT_VISIBLE_DEVICES"}, ContainerVar: "ASCEND_VISIBLE_DEVICES",
		DeviceID: IDPartitionOrIndex, NodeGlobs: []string{"/dev/davinci[0-9]*"}, DeviceNode: "/dev/davinci{card}",
		ControlNodes: []string{"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"},
		Container: ContainerHints{Runtime: "ascend-docker-runtime",
			Mounts: []string{"/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro"}},
		// Ascend slices only through vNPU templates: no driver limits.
		Sharing: true, Hardware: "vnpu", Models: ascendVNPUModels, CollectiveIfVar: "HCCL_SOCKET_IFNAME"},
	{ID: Cambricon, Name: "Cambricon MLU",
		CLIs:        []CLI{{Name: "cnmon", Forms: []string{"table"}}},
		ProcessVars: []string{"MLU_VISIBLE_DEVICES"}, ContainerVar: "CAMBRICON_VISIBLE_DEVICES",
		DeviceID: IDPartitionOrIndex, NodeGlobs: []string{"/dev/cambricon_dev[0-9]*"},
		DeviceNode: "/dev/cambricon_dev{index}", ControlNodes: []string{"/dev/cambricon_ctl"},
		// Silver: Cambricon's memory split ("mlu-share" in its device plugin
		// v1.3.6, Cambricon/cambricon-k8s-device-plugin device-plugin/pkg/mlu
		// const.go and server.go allocateMLUShare): CAMBRICON_SPLIT_ENABLE=1,
		// CAMBRICON_SPLIT_VISIBLE_DEVICES=<one card>, CAMBRICON_SPLIT_MEMS=<GiB>,
		// enforced by the split driver's /dev/cambricon-split, with
		// /usr/bin/smlu-containerd mounted into containers. sMLU (driver ≥
		// 5.10.27) is switched on per card with `cnmon set -c <i> -smlu on`,
		// but its instances are created only through libcndev by Cambricon's
		// device plugin (dynamic-smlu mode): no host CLI, so not driven here;
		// MIM instances are preset by an administrator. See docs/ISOLATION.md.
		DriverLimits: []string{DriverEnvLimits}, Sharing: true,
		SilverNodes:     map[string]string{DriverEnvLimits: "/dev/cambricon-split"},
		SilverMounts:    map[string][]string{DriverEnvLimits: {"/usr/bin/smlu-containerd"}},
		SilverOneDevice: []string{DriverEnvLimits},
		// "Mlu-sharing can only be applied on MLU-370" (HAMi
		// docs/cambricon-mlu-support.md, the memory-split version).
		SilverModels: map[string][]string{DriverEnvLimits: {"MLU370"}}},
	{ID: Kunlunxin, Name: "Kunlunxin XPU",
		CLIs: []CLI{{Name: "xpu-smi", Forms: []string{"machine", "table"}}, {Name: "xpu_smi", Forms: []string{"table"}}},
		// The smi index is not always the /dev/xpuN suffix (README §6): the
		// inventory's Card carries the minor number when the parser knows it.
		ProcessVars: []string{"XPU_VISIBLE_DEVICES"}, DeviceID: IDIndex,
		NodeGlobs: []string{"/dev/xpu[0-9]*"}, DeviceNode: "/dev/xpu{card}", ControlNodes: []string{"/dev/xpuctrl"},
		Sharing: true},
	{ID: MThreads, Name: "Moore Threads",
		CLIs:        []CLI{{Name: "mthreads-gmi", Forms: []string{"table", "json"}}},
		ProcessVars: []string{"MUSA_VISIBLE_DEVICES"}, ContainerVar: "MTHREADS_VISIBLE_DEVICES", DeviceID: IDIndex,
		NodeGlobs: []string{"/dev/mtgpu.[0-9]*"},
		Container: ContainerHints{Runtime: "mt-container-toolkit"},
		// No Silver: sGPU memory and cores (HAMi mthreads.com/sgpu-memory in
		// 512 MiB units, sgpu-core in sixteenths; Project-HAMi/HAMi
		// pkg/device/mthreads, docs/mthreads-support.md) are enforced by
		// Moore Threads' cloud-native toolkit inside Kubernetes, and MPC
		// partitions (mthreads-gmi "MPC Capable"/"MPC Parent") have no
		// documented create command; neither has a host CLI or variable the
		// agent could set and read back. See docs/ISOLATION.md.
		Sharing: true},
	{ID: Biren, Name: "Biren",
		CLIs:     []CLI{{Name: "brsmi", Forms: []string{"csv"}}, {Name: "birensmi", Forms: []string{"csv"}}},
		DeviceID: IDIndex, NodeGlobs: []string{"/dev/biren/card_[0-9]*"}, DeviceNode: "/dev/biren/card_{index}",
		// Biren's only knob is SVI (device plugin resources): no time-sharing.
		Sharing: false},
	{ID: Iluvatar, Name: "Iluvatar CoreX",
		CLIs:        []CLI{{Name: "ixsmi", Forms: []string{"table", "csv"}}},
		ProcessVars: []string{"CUDA_VISIBLE_DEVICES"}, ContainerVar: "IX_VISIBLE_DEVICES", DeviceID: IDIndex,
		// vMem / vCore (HAMi-core build for CoreX).
		NodeGlobs: []string{"/dev/iluvatar[0-9]*"}, DriverLimits: []string{DriverHAMiCore}, Sharing: true},
	{ID: MetaX, Name: "MetaX",
		CLIs:        []CLI{{Name: "mx-smi", Forms: []string{"table"}}},
		ProcessVars: []string{"CUDA_VISIBLE_DEVICES"}, DeviceID: IDIndex,
		// Containers get /dev/dri/cardN and /dev/mxcd (PaddleNLP metax README).
		NodeGlobs: []string{"/dev/mxcd"}, DeviceNode: "/dev/dri/card{index}", ControlNodes: []string{"/dev/mxcd"},
		DriverLimits: []string{DriverEnvLimits}, Sharing: true}, // sGPU
	{ID: Enflame, Name: "Enflame GCU",
		CLIs:        []CLI{{Name: "efsmi", Forms: []string{"table"}}},
		ProcessVars: []string{"TOPS_VISIBLE_DEVICES"}, ContainerVar: "ENFLAME_VISIBLE_DEVICES", DeviceID: IDIndex,
		NodeGlobs: []string{"/dev/gcu[0-9]*"}, DeviceNode: "/dev/gcu{index}",
		DriverLimits: []string{DriverEnvLimits}, Sharing: true}, // DRS GCU
}
