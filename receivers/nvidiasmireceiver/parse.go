package nvidiasmireceiver

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// Output forms this package parses; the names are what `heteroflow smi parse
// --format` accepts.
const (
	FormXML   = "xml"   // nvidia-smi -q -x
	FormCSV   = "csv"   // nvidia-smi --query-gpu=… --format=csv
	FormList  = "list"  // nvidia-smi -L
	FormTopo  = "topo"  // nvidia-smi topo -m
	FormMIG   = "mig"   // nvidia-smi mig -lgi
	FormTable = "table" // nvidia-smi (default table)
)

// Forms lists the forms in detection order.
var Forms = []string{FormXML, FormCSV, FormList, FormTopo, FormMIG, FormTable}

// Detect names the form of data, or "" when it is none of them.
func Detect(data []byte) string {
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	s := string(bytes.TrimSpace(head))
	switch {
	case strings.Contains(s, "<nvidia_smi_log"):
		return FormXML
	case strings.HasPrefix(s, "GPU 0:") || reListGPU.MatchString(firstLine(s)):
		return FormList
	case strings.Contains(s, "NVIDIA-SMI") && strings.Contains(s, "Bus-Id"):
		return FormTable
	case strings.Contains(s, "GPU instances:"):
		return FormMIG
	case strings.Contains(s, "GPU0") && (strings.Contains(s, "CPU Affinity") || strings.Contains(s, "Legend:")):
		return FormTopo
	}
	first := strings.ToLower(firstLine(s))
	if strings.Contains(first, ",") && (strings.Contains(first, "name") || strings.Contains(first, "uuid") ||
		strings.Contains(first, "index") || strings.Contains(first, "memory.")) {
		return FormCSV
	}
	return ""
}

// ParseForm parses data as the named form.
func ParseForm(form string, data []byte) (*inventory.Snapshot, error) {
	switch form {
	case FormXML:
		return ParseXML(data)
	case FormCSV:
		return ParseCSV(data)
	case FormList:
		return ParseList(data)
	case FormTopo:
		return ParseTopo(data)
	case FormMIG:
		return ParseMIGInstances(data)
	case FormTable:
		return ParseTable(data)
	}
	return nil, fmt.Errorf("nvidia-smi: unknown form %q (known: %s)", form, strings.Join(Forms, ", "))
}

// Parse detects the form of data and parses it.
func Parse(data []byte) (*inventory.Snapshot, error) {
	if err := pu.CheckSize(data); err != nil {
		return nil, err
	}
	form := Detect(data)
	if form == "" {
		return nil, pu.Unrecognised("not nvidia-smi output (expected -q -x XML, --query-gpu CSV with header, -L, topo -m, mig -lgi or the default table)")
	}
	return ParseForm(form, data)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
