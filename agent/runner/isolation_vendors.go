package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// instanceIDRe reads "Successfully created GPU instance ID  1 on GPU  0 …"
// and "Successfully created compute instance ID  0 on GPU …".
var instanceIDRe = regexp.MustCompile(`(?i)created (?:GPU|compute) instance ID\s+(\d+)`)

// createMIG creates a GPU instance of d.Profile with its default compute
// instance (`mig -cgi P -C`), then finds the new MIG device's UUID by
// comparing `nvidia-smi -L` before and after (the create command does not
// print it). On exit the compute instance (-dci, when the driver reported
// one) and the GPU instance (-dgi) are destroyed.
func (iso *Isolator) createMIG(ctx context.Context, p *Prepared, d *protocol.DeviceSlice) error {
	gpu := strconv.Itoa(d.Index)
	before, err := iso.listMIG(ctx, d.Index)
	if err != nil {
		return err
	}
	out, err := iso.CLI.Run(ctx, "nvidia-smi", "mig", "-i", gpu, "-cgi", d.Profile, "-C")
	if err != nil {
		return fmt.Errorf("create MIG instance %s on GPU %s: %w", d.Profile, gpu, err)
	}
	gi, ci, err := parseMIGCreate(out)
	if err != nil {
		return fmt.Errorf("create MIG instance on GPU %s: %w", gpu, err)
	}
	p.undo = append(p.undo, func(ctx context.Context) error {
		_, err := iso.CLI.Run(ctx, "nvidia-smi", "mig", "-i", gpu, "-dgi", "-gi", gi)
		return wrapUndo("destroy MIG GPU instance "+gi+" on GPU "+gpu, err)
	})
	if ci != "" {
		p.undo = append(p.undo, func(ctx context.Context) error {
			_, err := iso.CLI.Run(ctx, "nvidia-smi", "mig", "-i", gpu, "-dci", "-gi", gi, "-ci", ci)
			return wrapUndo("destroy MIG compute instance "+ci+" in GI "+gi+" on GPU "+gpu, err)
		})
	}
	after, err := iso.listMIG(ctx, d.Index)
	if err != nil {
		return err
	}
	for _, u := range after {
		if !contains(before, u) {
			d.PartitionUUID, d.PartitionID = u, gi
			iso.log().Info("created MIG instance", "gpu", gpu, "profile", d.Profile, "gi", gi, "ci", ci, "uuid", u)
			return nil
		}
	}
	return fmt.Errorf("MIG instance %s on GPU %s was created but nvidia-smi -L shows no new MIG device", gi, gpu)
}

// parseMIGCreate reads the GPU instance id and, when printed, the compute
// instance id from the answer of `mig -cgi … -C`.
func parseMIGCreate(out []byte) (gi, ci string, err error) {
	for _, m := range instanceIDRe.FindAllSubmatch(out, -1) {
		if strings.Contains(strings.ToLower(string(m[0])), "compute") {
			ci = string(m[1])
		} else if gi == "" {
			gi = string(m[1])
		}
	}
	if gi == "" {
		return "", "", fmt.Errorf("unexpected output %q", strings.TrimSpace(string(out)))
	}
	return gi, ci, nil
}

// listMIG returns the MIG UUIDs listed under GPU gpu by `nvidia-smi -L`:
//
//	GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-…)
//	  MIG 1g.5gb      Device  0: (UUID: MIG-…)
func (iso *Isolator) listMIG(ctx context.Context, gpu int) ([]string, error) {
	out, err := iso.CLI.Run(ctx, "nvidia-smi", "-L")
	if err != nil {
		return nil, fmt.Errorf("list MIG devices: %w", err)
	}
	return parseMIGList(out, gpu), nil
}

func parseMIGList(out []byte, gpu int) []string {
	var uuids []string
	cur := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "GPU "); ok {
			n, _, _ := strings.Cut(rest, ":")
			if i, err := strconv.Atoi(strings.TrimSpace(n)); err == nil {
				cur = i
			}
			continue
		}
		if cur == gpu && strings.HasPrefix(line, "MIG ") {
			if _, u, ok := strings.Cut(line, "UUID: "); ok {
				uuids = append(uuids, strings.TrimSuffix(strings.TrimSpace(u), ")"))
			}
		}
	}
	return uuids
}

// vNPU ids on a chip are phy*16+100 … phy*16+115 (Ascend virtualisation
// guide; phy is the chip's physical id, which equals the logical id on
// one-chip-per-card 910 boards). The agent chooses the id itself so it can
// destroy exactly that one.
const vnpuBase, vnpuPerChip = 100, 16

var vnpuIDRe = regexp.MustCompile(`(?i)vNPU ID\s*:\s*(\d+)`)

func (iso *Isolator) createVNPU(ctx context.Context, p *Prepared, d *protocol.DeviceSlice) error {
	card, chip := physicalID(*d), 0
	if d.Chip != nil {
		chip = *d.Chip
	}
	id, err := iso.reserveVNPU(d.Index)
	if err != nil {
		return err
	}
	ids, cs, vs := strconv.Itoa(card), strconv.Itoa(chip), strconv.Itoa(id)
	out, err := iso.CLI.Run(ctx, "npu-smi", "set", "-t", "create-vnpu", "-i", ids, "-c", cs, "-f", d.Profile, "-v", vs)
	if err != nil {
		iso.releaseVNPU(id)
		return fmt.Errorf("create vNPU %s on NPU %s chip %s: %w", d.Profile, ids, cs, err)
	}
	// Read the id back: npu-smi answers "vNPU ID : <id>"; the task must see
	// the vNPU that exists, and the destroy must name it.
	if m := vnpuIDRe.FindSubmatch(out); m != nil && string(m[1]) != vs {
		got := string(m[1])
		_, derr := iso.CLI.Run(ctx, "npu-smi", "set", "-t", "destroy-vnpu", "-i", ids, "-c", cs, "-v", got)
		iso.releaseVNPU(id)
		return errors.Join(fmt.Errorf("create vNPU on NPU %s chip %s: asked for id %s, npu-smi created %s", ids, cs, vs, got),
			wrapUndo("destroy vNPU "+got, derr))
	}
	p.undo = append(p.undo, func(ctx context.Context) error {
		_, err := iso.CLI.Run(ctx, "npu-smi", "set", "-t", "destroy-vnpu", "-i", ids, "-c", cs, "-v", vs)
		if err == nil {
			iso.releaseVNPU(id)
		}
		return wrapUndo("destroy vNPU "+vs, err)
	})
	d.PartitionID = vs
	iso.log().Info("created vNPU", "npu", ids, "chip", cs, "template", d.Profile, "vnpu_id", vs)
	return nil
}

func (iso *Isolator) reserveVNPU(logical int) (int, error) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if iso.vnpuUsed == nil {
		iso.vnpuUsed = map[int]bool{}
	}
	for id := logical*vnpuPerChip + vnpuBase; id < (logical+1)*vnpuPerChip+vnpuBase; id++ {
		if !iso.vnpuUsed[id] {
			iso.vnpuUsed[id] = true
			return id, nil
		}
	}
	return 0, fmt.Errorf("no free vNPU id on chip %d", logical)
}

func (iso *Isolator) releaseVNPU(id int) {
	iso.mu.Lock()
	delete(iso.vnpuUsed, id)
	iso.mu.Unlock()
}

// vdevRe reads the vDCU id from hy-smi's answer. No public sample of the
// output exists (smi-samples README §3); the id is taken from the first
// "vdevice <n>"/"vDCU <n>" mention and the task fails when there is none.
var vdevRe = regexp.MustCompile(`(?i)v(?:device|dcu)\D{0,12}(\d+)`)

// createVDCU carves one virtual DCU with the slice's compute units and
// memory: hy-smi virtual -create-vdevices 1 -d IDX -vdevice-compute-units CU
// -vdevice-memory-size MiB. It is destroyed with -destroy-vdevice.
func (iso *Isolator) createVDCU(ctx context.Context, p *Prepared, d *protocol.DeviceSlice) error {
	if d.ComputeUnits <= 0 || d.MemoryMiB <= 0 {
		return fmt.Errorf("hygon vDCU needs compute_units and memory_mib")
	}
	dev := strconv.Itoa(d.Index)
	out, err := iso.CLI.Run(ctx, "hy-smi", "virtual", "-create-vdevices", "1", "-d", dev,
		"-vdevice-compute-units", strconv.Itoa(d.ComputeUnits), "-vdevice-memory-size", strconv.Itoa(d.MemoryMiB))
	if err != nil {
		return fmt.Errorf("create vDCU on DCU %s: %w", dev, err)
	}
	m := vdevRe.FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("create vDCU on DCU %s: no vdevice id in %q", dev, strings.TrimSpace(string(out)))
	}
	vid := string(m[1])
	p.undo = append(p.undo, func(ctx context.Context) error {
		_, err := iso.CLI.Run(ctx, "hy-smi", "virtual", "-destroy-vdevice", vid)
		return wrapUndo("destroy vDCU "+vid, err)
	})
	// Read back: the vDCU must be listed before the task is handed it.
	list, err := iso.CLI.Run(ctx, "hy-smi", "virtual", "-show-vdevice-info")
	if err != nil {
		return fmt.Errorf("list vDCUs on DCU %s: %w", dev, err)
	}
	if !listsVDCU(list, vid) {
		return fmt.Errorf("vDCU %s on DCU %s was created but hy-smi virtual -show-vdevice-info does not list it", vid, dev)
	}
	d.PartitionID = vid
	return nil
}

func wrapUndo(what string, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// listsVDCU reports whether a -show-vdevice-info listing names vDCU id.
func listsVDCU(out []byte, id string) bool {
	for _, m := range vdevRe.FindAllSubmatch(out, -1) {
		if string(m[1]) == id {
			return true
		}
	}
	return false
}
