package nvidiasmireceiver

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// xmlLog mirrors the parts of nvsmi_device_v11.dtd (driver 510) and
// nvsmi_device_v12.dtd (driver 535+) that the inventory needs. Both schemas
// are read by one struct: elements that exist in only one of them (the
// power_readings / gpu_power_readings split, power_limit /
// current_power_limit) are separate fields and the parser takes whichever
// is present.
type xmlLog struct {
	XMLName       xml.Name `xml:"nvidia_smi_log"`
	DriverVersion string   `xml:"driver_version"`
	CUDAVersion   string   `xml:"cuda_version"`
	AttachedGPUs  string   `xml:"attached_gpus"`
	GPUs          []xmlGPU `xml:"gpu"`
}

type xmlMemory struct {
	Total string `xml:"total"`
	Used  string `xml:"used"`
}

type xmlPower struct {
	PowerDraw         string `xml:"power_draw"`
	PowerLimit        string `xml:"power_limit"`         // v11
	CurrentPowerLimit string `xml:"current_power_limit"` // v12
}

type xmlECCCounts struct {
	SRAMUncorrectable string `xml:"sram_uncorrectable"`
	DRAMUncorrectable string `xml:"dram_uncorrectable"`
	// Older (pre-Ampere) schemas: device_memory / total.
	Total string `xml:"total"`
}

type xmlGPU struct {
	ID          string `xml:"id,attr"`
	ProductName string `xml:"product_name"`
	MIGMode     struct {
		Current string `xml:"current_mig"`
	} `xml:"mig_mode"`
	MIGDevices  []xmlMIG `xml:"mig_devices>mig_device"`
	DriverModel struct {
		Current string `xml:"current_dm"`
	} `xml:"driver_model"`
	Serial      string `xml:"serial"`
	UUID        string `xml:"uuid"`
	MinorNumber string `xml:"minor_number"`
	VBIOS       string `xml:"vbios_version"`
	PCI         struct {
		BusID string `xml:"pci_bus_id"`
	} `xml:"pci"`
	FB          xmlMemory `xml:"fb_memory_usage"`
	Utilization struct {
		GPU string `xml:"gpu_util"`
	} `xml:"utilization"`
	ECC struct {
		Aggregate xmlECCCounts `xml:"aggregate"`
	} `xml:"ecc_errors"`
	RetiredPages struct {
		Pending string `xml:"pending_retirement"`
	} `xml:"retired_pages"`
	RemappedRows struct {
		Pending string `xml:"remapped_row_pending"`
		Failure string `xml:"remapped_row_failure"`
	} `xml:"remapped_rows"`
	Temperature struct {
		GPU string `xml:"gpu_temp"`
	} `xml:"temperature"`
	PowerV11 xmlPower `xml:"power_readings"`
	PowerV12 xmlPower `xml:"gpu_power_readings"`
}

type xmlMIG struct {
	Index             string    `xml:"index"`
	GPUInstanceID     string    `xml:"gpu_instance_id"`
	ComputeInstanceID string    `xml:"compute_instance_id"`
	SMCount           string    `xml:"device_attributes>shared>multiprocessor_count"`
	FB                xmlMemory `xml:"fb_memory_usage"`
}

// ParseXML parses `nvidia-smi -q -x`. The GPU's index is its position in the
// document: nvidia-smi lists GPUs in index order, and minor_number is the
// /dev/nvidiaN suffix, which is not always the CUDA index.
func ParseXML(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	if !bytes.Contains(data, []byte("<nvidia_smi_log")) {
		return nil, pu.Unrecognised("nvidia-smi -q -x: no <nvidia_smi_log> element")
	}
	var doc xmlLog
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = false // tolerate the DOCTYPE and stray entities
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("nvidia-smi -q -x: %w", err)
	}
	snap := &inventory.Snapshot{
		Vendor:         inventory.VendorNVIDIA,
		DriverVersion:  pu.Str(doc.DriverVersion),
		RuntimeVersion: pu.Str(doc.CUDAVersion),
		Devices:        []inventory.Device{},
	}
	for i, g := range doc.GPUs {
		snap.Devices = append(snap.Devices, xmlDevice(i, g, snap))
	}
	if n := pu.Int(doc.AttachedGPUs); n != nil && *n != len(doc.GPUs) {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("attached_gpus says %d but %d <gpu> elements were listed", *n, len(doc.GPUs)))
	}
	if len(snap.Devices) == 0 {
		return snap, fmt.Errorf("nvidia-smi -q -x: %w", pu.ErrNoDevices)
	}
	return snap, nil
}

func xmlDevice(i int, g xmlGPU, snap *inventory.Snapshot) inventory.Device {
	d := inventory.Device{
		Index:              i,
		UUID:               pu.Str(g.UUID),
		Serial:             pu.Str(g.Serial),
		Model:              strings.TrimSpace(g.ProductName),
		MemoryTotalMiB:     pu.MiB(g.FB.Total, "MiB"),
		MemoryUsedMiB:      pu.MiB(g.FB.Used, "MiB"),
		UtilizationPercent: pu.Float(g.Utilization.GPU),
		TemperatureCelsius: pu.Float(g.Temperature.GPU),
		BusID:              pu.BusID(g.PCI.BusID),
		FirmwareVersion:    pu.Str(g.VBIOS),
		Partitions:         []inventory.Partition{},
	}
	if d.BusID == nil {
		d.BusID = pu.BusID(g.ID)
	}
	d.PowerWatts = firstFloat(g.PowerV12.PowerDraw, g.PowerV11.PowerDraw)
	d.PowerLimitWatts = firstFloat(g.PowerV12.CurrentPowerLimit, g.PowerV11.PowerLimit)
	d.ECCErrors = sumKnown(g.ECC.Aggregate.SRAMUncorrectable, g.ECC.Aggregate.DRAMUncorrectable, g.ECC.Aggregate.Total)
	d.Health = xmlHealth(g, d.ECCErrors)
	if d.Model == "" {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("gpu %d: no product_name", i))
	}
	d.MIGMode = strings.EqualFold(strings.TrimSpace(g.MIGMode.Current), "Enabled")
	for _, m := range g.MIGDevices {
		p := inventory.Partition{
			Kind:           "mig",
			ID:             strings.TrimSpace(m.GPUInstanceID),
			MemoryTotalMiB: pu.MiB(m.FB.Total, "MiB"),
			MemoryUsedMiB:  pu.MiB(m.FB.Used, "MiB"),
			ComputeUnits:   pu.Int(m.SMCount),
		}
		if ci := strings.TrimSpace(m.ComputeInstanceID); ci != "" && p.ID != "" {
			// GI alone is not unique once a GI is split into several CIs.
			p.ID = p.ID + "/" + ci
		}
		if p.ID == "" {
			p.ID = strings.TrimSpace(m.Index)
		}
		d.Partitions = append(d.Partitions, p)
	}
	return d
}

// xmlHealth derives a health word from the error counters nvidia-smi shows.
// nil when none of them is readable (GeForce boards report N/A throughout):
// we do not claim "ok" for a device whose health we cannot see.
func xmlHealth(g xmlGPU, ecc *int64) *string {
	yes := func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "yes") }
	switch {
	case yes(g.RemappedRows.Failure):
		return pu.Ptr("critical")
	case yes(g.RemappedRows.Pending), yes(g.RetiredPages.Pending):
		return pu.Ptr("warning")
	}
	known := ecc != nil || !pu.IsUnknown(g.RemappedRows.Pending) || !pu.IsUnknown(g.RetiredPages.Pending)
	if !known {
		return nil
	}
	if ecc != nil && *ecc > 0 {
		return pu.Ptr("warning")
	}
	return pu.Ptr("ok")
}

func firstFloat(vals ...string) *float64 {
	for _, v := range vals {
		if f := pu.Float(v); f != nil {
			return f
		}
	}
	return nil
}

// sumKnown adds the readable counters; nil when none is readable.
func sumKnown(vals ...string) *int64 {
	var sum int64
	seen := false
	for _, v := range vals {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 {
			sum += n
			seen = true
		}
	}
	if !seen {
		return nil
	}
	return &sum
}
