package smi

import (
	"path/filepath"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/smi/smitest"
	"github.com/stretchr/testify/require"
)

// TestConformanceSamples parses every real-output sample in the shared
// sample tree (skipped when absent) and checks what a human reading the
// sample states: device count, models, memory total. Memory -1 means the
// form carries no absolute memory (percentages only, topology, lists).
func TestConformanceSamples(t *testing.T) {
	t.Parallel()
	if smitest.SamplesDir() == "" {
		t.Skip("shared smi-samples directory not present")
	}
	cases := []struct {
		file, vendor, form string
		devices            int
		model              string // every device's model ("" = not checked)
		memTotal           int64  // sum of memory_total_mib; -1 = unknown in this form
		memUsed            int64  // sum of memory_used_mib; -1 = not checked
	}{
		{"nvidia-smi/nvidia-smi-qx-a100-sxm4-mig-510.xml", "nvidia", "xml", 1, "NVIDIA A100-SXM4-40GB", 40960, 38},
		{"nvidia-smi/nvidia-smi-qx-rtx4090-535.xml", "nvidia", "xml", 1, "NVIDIA GeForce RTX 4090", 24564, 2},
		{"nvidia-smi/nvidia-smi-qx-rtx3060.xml", "nvidia", "xml", 1, "NVIDIA GeForce RTX 3060 Laptop GPU", 6144, 5},
		{"nvidia-smi/nvidia-smi-query-gpu-csv-tesla-p100.csv", "nvidia", "csv", 1, "Tesla P100-PCIE-16GB", 103 + 0 + 16280, 0},
		{"nvidia-smi/nvidia-smi-L-mig-a100-telegraf5812.txt", "nvidia", "list", 4, "NVIDIA A100-SXM4-80GB", -1, -1},
		{"nvidia-smi/nvidia-smi-L-mig-a100-datadog33120.txt", "nvidia", "list", 1, "NVIDIA A100-SXM4-80GB", -1, -1},
		{"nvidia-smi/nvidia-smi-topo-m-2gpu-club3090-1229.txt", "nvidia", "topo", 2, "", -1, -1},
		{"nvidia-smi/nvidia-smi-mig-lgi-excerpt-dcgm138.txt", "nvidia", "mig", 2, "", -1, -1},
		{"rocm-smi/rocm-smi-json-6.2.4-rx7800xt-gpustack.json", "amd", "json", 1, "Navi 32 [Radeon RX 7700 XT / 7800 XT]", 16368, 11077},
		{"rocm-smi/rocm-smi-showtoponuma-8gpu-issue4740.txt", "amd", "kv", 8, "", -1, -1},
		{"hy-smi/hy-smi-dtk24.04.1-k100ai-paddlenlp.txt", "hygon", "table", 4, "", -1, -1},
		{"hy-smi/hygon-rocm-smi-json-dtk24.04.3-gpustack.json", "hygon", "json", 1, "DCU xxxx", 65520, 2},
		{"npu-smi/npu-smi-info-20.2.0-atlas300-310-gpustack.txt", "ascend", "info", 4, "310", 4 * 8192, 4 * 2703},
		{"npu-smi/npu-smi-info-22.0.3.1-910A-gpustack.txt", "ascend", "info", 8, "910A", 8 * 32768, 0},
		{"npu-smi/npu-smi-info-23.0.3-910B2C-paddle.txt", "ascend", "info", 2, "910B2C", 2 * 65536, 3317 + 3316},
		{"npu-smi/npu-smi-info-23.0.rc3-910B2C-paddle.txt", "ascend", "info", 2, "910B2C", 2 * 65536, 2 * 4302},
		{"npu-smi/npu-smi-info-m-310-v1.0.10-gpustack.txt", "ascend", "map", 4, "MiniD", -1, -1},
		{"npu-smi/npu-smi-info-m-310-v1.0.15-gpustack.txt", "ascend", "map", 4, "MiniD", -1, -1},
		{"npu-smi/npu-smi-info-m-910A-24.1.RC2-gpustack.txt", "ascend", "map", 8, "Ascend 910A", -1, -1},
		{"npu-smi/npu-smi-info-t-board-example1-hwdoc-via-gpustack.txt", "ascend", "board", 1, "", -1, -1},
		{"npu-smi/npu-smi-info-t-board-example2-hwdoc-via-gpustack.txt", "ascend", "board", 1, "", -1, -1},
		{"npu-smi/npu-smi-info-t-common-example1-hwdoc-via-gpustack.txt", "ascend", "common", 1, "", -1, -1},
		{"npu-smi/npu-smi-info-t-common-example2-hwdoc-via-gpustack.txt", "ascend", "common", 2, "", -1, -1},
		{"npu-smi/npu-smi-info-t-usages-example1-hwdoc-via-gpustack.txt", "ascend", "usages", 1, "", 32768, 0},
		{"npu-smi/npu-smi-info-t-usages-example2-hwdoc-via-gpustack.txt", "ascend", "usages", 2, "", 44280 + 43693, -1},
		{"cnmon/cnmon-v5.10.13-mlu370x8-paddle.txt", "cambricon", "table", 2, "MLU370-X8", 2 * 23374, 0},
		{"cnmon/cnmon-v4.20.11-mlu370x4-paddle.txt", "cambricon", "table", 3, "MLU370-X4", 3 * 23308, 0},
		{"xpu-smi/xpu_smi-R300-paddle.txt", "kunlunxin", "table", 2, "R300", 2 * 32768, 0},
		{"mthreads-gmi/mthreads-gmi-1.14.0-mtt-s80-gpustack.txt", "mthreads", "table", 1, "MTT S80", 16384, 1339},
		{"ixsmi/ixsmi-4.1.0-bi-v150-paddlenlp.txt", "iluvatar", "table", 16, "Iluvatar BI-V150", 16 * 32768, 16 * 116},
		{"mx-smi/mx-smi-2.1.6-c550-paddlenlp.txt", "metax", "table", 8, "MXC550", 8 * 65536, 8 * 810},
		{"efsmi/efsmi-S60-paddle.txt", "enflame", "table", 2, "S60", 49120 + 42976, -1},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			t.Parallel()
			data := smitest.Sample(t, c.file)
			s, err := Lookup(c.vendor)
			require.NoError(t, err)
			require.Equal(t, c.form, s.Detect(data), "detected form")
			snap, err := Parse(c.vendor, "", data)
			require.NoError(t, err)
			require.Equal(t, c.vendor, snap.Vendor)
			require.Len(t, snap.Devices, c.devices)
			for _, d := range snap.Devices {
				if c.model != "" {
					require.Equal(t, c.model, d.Model)
				}
			}
			if c.memTotal >= 0 {
				require.Equal(t, c.memTotal, smitest.TotalMemory(snap))
			} else {
				for _, d := range snap.Devices {
					require.Nil(t, d.MemoryTotalMiB, "form carries no absolute memory")
				}
			}
			if c.memUsed >= 0 {
				var used int64
				for _, d := range snap.Devices {
					require.NotNil(t, d.MemoryUsedMiB)
					used += *d.MemoryUsedMiB
				}
				require.Equal(t, c.memUsed, used)
			}
		})
	}
}
