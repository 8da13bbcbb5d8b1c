package sim

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

// openbMemoryMiB: device memory of the openb GPU models where public (G2
// and G3 are undisclosed Alibaba codes: unknown, 0). The trace requests no
// device memory, so these never decide a placement.
var openbMemoryMiB = map[string]int64{
	"T4": 16384, "P100": 16384, "V100M16": 16384, "V100M32": 32768, "A10": 24576,
}

// readCSV returns the header index and the rows of a CSV file.
func readCSV(r io.Reader) (map[string]int, [][]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("empty file")
	}
	idx := map[string]int{}
	for i, h := range rows[0] {
		idx[strings.TrimSpace(h)] = i
	}
	return idx, rows[1:], nil
}

func field(idx map[string]int, row []string, name string) string {
	i, ok := idx[name]
	if !ok || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}

func intField(idx map[string]int, row []string, name string, line int) (int64, error) {
	s := field(idx, row, name)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("line %d: %s: %w", line, name, err)
	}
	return v, nil
}

func requireColumns(idx map[string]int, cols ...string) error {
	for _, c := range cols {
		if _, ok := idx[c]; !ok {
			return fmt.Errorf("missing column %q", c)
		}
	}
	return nil
}

// ParseOpenbNodes reads sn,cpu_milli,memory_mib,gpu,model. Every GPU is an
// NVIDIA-class device of 1000 milli with the model's isolation table.
func ParseOpenbNodes(r io.Reader) ([]model.Node, error) {
	idx, rows, err := readCSV(r)
	if err != nil {
		return nil, err
	}
	if err := requireColumns(idx, "sn", "cpu_milli", "memory_mib", "gpu", "model"); err != nil {
		return nil, err
	}
	nodes := make([]model.Node, 0, len(rows))
	for i, row := range rows {
		line := i + 2
		cpu, err1 := intField(idx, row, "cpu_milli", line)
		mem, err2 := intField(idx, row, "memory_mib", line)
		gpus, err3 := intField(idx, row, "gpu", line)
		if err := firstErr(err1, err2, err3); err != nil {
			return nil, err
		}
		n := model.Node{Name: field(idx, row, "sn"), CPUMilli: cpu, MemoryMiB: mem}
		m := field(idx, row, "model")
		for d := 0; d < int(gpus); d++ {
			n.Devices = append(n.Devices, model.Device{Index: d, Vendor: inventory.VendorNVIDIA, Model: m, NUMA: -1,
				MemoryMiB: openbMemoryMiB[m], Isolation: inventory.IsolationFor(inventory.VendorNVIDIA, m)})
		}
		if err := n.Validate(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// ParseOpenbPods reads name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,…].
// gpu_milli maps one to one onto compute milli (compute % × 10); gpu_spec's
// "|"-separated models become the allowed-model filter; every pod is a
// silver (driver-limited, shared) request, as GPU sharing is in the trace.
func ParseOpenbPods(r io.Reader) ([]model.Request, error) {
	idx, rows, err := readCSV(r)
	if err != nil {
		return nil, err
	}
	if err := requireColumns(idx, "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"); err != nil {
		return nil, err
	}
	out := make([]model.Request, 0, len(rows))
	for i, row := range rows {
		line := i + 2
		cpu, err1 := intField(idx, row, "cpu_milli", line)
		mem, err2 := intField(idx, row, "memory_mib", line)
		ngpu, err3 := intField(idx, row, "num_gpu", line)
		milli, err4 := intField(idx, row, "gpu_milli", line)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			return nil, err
		}
		if ngpu < 0 || milli < 0 || milli > 1000 {
			return nil, fmt.Errorf("line %d: num_gpu must be ≥ 0 and gpu_milli in [0,1000]", line)
		}
		r := model.Request{ID: field(idx, row, "name"), CPUMilli: cpu, HostMemoryMiB: mem, DeviceCount: int(ngpu), QoS: model.QoSSilver}
		if ngpu > 0 {
			if milli == 0 {
				milli = 1000
			}
			r.ComputePercent = float64(milli) / 10
		}
		if spec := field(idx, row, "gpu_spec"); spec != "" && spec != "nan" {
			r.Models = strings.Split(spec, "|")
		}
		if err := r.Normalize(); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// LoadNodes reads an openb node CSV or a JSON array of model.Node.
func LoadNodes(path string) ([]model.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nodes []model.Node
	if isJSON(b) {
		nodes, err = parseJSONNodes(b)
	} else {
		nodes, err = ParseOpenbNodes(strings.NewReader(string(b)))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: no nodes", path)
	}
	return nodes, nil
}

// LoadTasks reads an openb pod CSV or a JSON array of model.Request.
func LoadTasks(path string) ([]model.Request, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tasks []model.Request
	if isJSON(b) {
		tasks, err = parseJSONTasks(b)
	} else {
		tasks, err = ParseOpenbPods(strings.NewReader(string(b)))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no tasks", path)
	}
	return tasks, nil
}
