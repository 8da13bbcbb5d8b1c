package smi

import (
	"fmt"
	"strings"

	"github.com/heteroflow/heteroflow/receivers/brsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/cnmonreceiver"
	"github.com/heteroflow/heteroflow/receivers/efsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/hysmireceiver"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/ixsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mthreadsgmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mxsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/npusmireceiver"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	"github.com/heteroflow/heteroflow/receivers/rocmsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/xpusmireceiver"
)

// Command is one invocation of a vendor tool and the form it prints.
type Command struct {
	Args []string
	Form string
	// Secondary commands add detail (topology, chip map); their failure is a
	// warning, never a failed collection.
	Secondary bool
}

// Tool is one binary name (or absolute path) and the commands that make a
// full snapshot with it. The first command is the primary one.
type Tool struct {
	Name     string
	Commands []Command
}

// Spec is everything Collect needs to know about one vendor.
type Spec struct {
	Vendor string
	// Tools are tried in order; the first one that exists is used.
	Tools []Tool
	// Forms, Detect and ParseForm come from the vendor's parser package.
	Forms     []string
	Detect    func([]byte) string
	ParseForm func(form string, data []byte) (*inventory.Snapshot, error)
	// Parse auto-detects; its error names the forms it expected.
	Parse func([]byte) (*inventory.Snapshot, error)
}

// ToolNames lists the binary names this vendor answers to.
func (s Spec) ToolNames() []string {
	out := make([]string, 0, len(s.Tools))
	for _, t := range s.Tools {
		out = append(out, t.Name)
	}
	return out
}

func one(name string, cmds ...Command) Tool { return Tool{Name: name, Commands: cmds} }

// nvidiaCmds: the XML has every device field and MIG instance; topo -m adds
// links and NUMA nodes.
var nvidiaCmds = []Command{
	{Args: []string{"-q", "-x"}, Form: nvidiasmireceiver.FormXML},
	{Args: []string{"topo", "-m"}, Form: nvidiasmireceiver.FormTopo, Secondary: true},
}

// npuCmds: info lists every chip; info -m maps (NPU, chip) to the logical
// id that ASCEND_RT_VISIBLE_DEVICES takes.
var npuCmds = []Command{
	{Args: []string{"info"}, Form: npusmireceiver.FormInfo},
	{Args: []string{"info", "-m"}, Form: npusmireceiver.FormMap, Secondary: true},
}

var hyCmds = []Command{{Args: hysmireceiver.JSONArgs, Form: hysmireceiver.FormJSON}}

var biCSV = []Command{{Args: []string{"--query-gpu=" + strings.Join(nvidiasmireceiver.QueryFields, ","), "--format=csv,nounits"}, Form: brsmireceiver.FormCSV}}

// specs is the one table of vendors; keep it in inventory.Vendors order.
var specs = map[string]Spec{
	inventory.VendorNVIDIA: {Tools: []Tool{one("nvidia-smi", nvidiaCmds...)},
		Forms: nvidiasmireceiver.Forms, Detect: nvidiasmireceiver.Detect, ParseForm: nvidiasmireceiver.ParseForm, Parse: nvidiasmireceiver.Parse},
	inventory.VendorAMD: {Tools: []Tool{one("rocm-smi", Command{Args: rocmsmireceiver.JSONArgs, Form: rocmsmireceiver.FormJSON})},
		Forms: rocmsmireceiver.Forms, Detect: rocmsmireceiver.Detect, ParseForm: rocmsmireceiver.ParseForm, Parse: rocmsmireceiver.Parse},
	inventory.VendorHygon: {Tools: []Tool{one("hy-smi", hyCmds...), one("/opt/hyhal/bin/hy-smi", hyCmds...)},
		Forms: hysmireceiver.Forms, Detect: hysmireceiver.Detect, ParseForm: hysmireceiver.ParseForm, Parse: hysmireceiver.Parse},
	inventory.VendorAscend: {Tools: []Tool{one("npu-smi", npuCmds...), one("/usr/local/sbin/npu-smi", npuCmds...)},
		Forms: npusmireceiver.Forms, Detect: npusmireceiver.Detect, ParseForm: npusmireceiver.ParseForm, Parse: npusmireceiver.Parse},
	inventory.VendorCambricon: {Tools: []Tool{one("cnmon", Command{Form: cnmonreceiver.FormTable})},
		Forms: cnmonreceiver.Forms, Detect: cnmonreceiver.Detect, ParseForm: cnmonreceiver.ParseForm, Parse: cnmonreceiver.Parse},
	// Newer Kunlunxin drivers ship xpu-smi (machine rows with -m); older ones
	// xpu_smi (the DEVICES table). Intel's xpu-smi is refused by the parser.
	inventory.VendorKunlunxin: {Tools: []Tool{
		one("xpu-smi", Command{Args: []string{"-m"}, Form: xpusmireceiver.FormMachine}),
		one("xpu_smi", Command{Form: xpusmireceiver.FormTable}),
	}, Forms: xpusmireceiver.Forms, Detect: xpusmireceiver.Detect, ParseForm: xpusmireceiver.ParseForm, Parse: xpusmireceiver.Parse},
	inventory.VendorMThreads: {Tools: []Tool{one("mthreads-gmi", Command{Form: mthreadsgmireceiver.FormTable})},
		Forms: mthreadsgmireceiver.Forms, Detect: mthreadsgmireceiver.Detect, ParseForm: mthreadsgmireceiver.ParseForm, Parse: mthreadsgmireceiver.Parse},
	inventory.VendorBiren: {Tools: []Tool{one("brsmi", biCSV...), one("birensmi", biCSV...)},
		Forms: brsmireceiver.Forms, Detect: brsmireceiver.Detect, ParseForm: brsmireceiver.ParseForm, Parse: brsmireceiver.Parse},
	inventory.VendorIluvatar: {Tools: []Tool{one("ixsmi", Command{Form: ixsmireceiver.FormTable})},
		Forms: ixsmireceiver.Forms, Detect: ixsmireceiver.Detect, ParseForm: ixsmireceiver.ParseForm, Parse: ixsmireceiver.Parse},
	inventory.VendorMetaX: {Tools: []Tool{one("mx-smi", Command{Form: mxsmireceiver.FormTable})},
		Forms: mxsmireceiver.Forms, Detect: mxsmireceiver.Detect, ParseForm: mxsmireceiver.ParseForm, Parse: mxsmireceiver.Parse},
	inventory.VendorEnflame: {Tools: []Tool{one("efsmi", Command{Form: efsmireceiver.FormTable})},
		Forms: efsmireceiver.Forms, Detect: efsmireceiver.Detect, ParseForm: efsmireceiver.ParseForm, Parse: efsmireceiver.Parse},
}

// Lookup returns the vendor's spec.
func Lookup(vendor string) (Spec, error) {
	s, ok := specs[strings.ToLower(strings.TrimSpace(vendor))]
	if !ok {
		return Spec{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownVendor, vendor, strings.Join(inventory.Vendors, ", "))
	}
	s.Vendor = strings.ToLower(strings.TrimSpace(vendor))
	return s, nil
}

// ToolVendor maps a tool name (as fakesmi and wrappers use it) to its
// vendor, or "" when unknown.
func ToolVendor(tool string) string {
	for v, s := range specs {
		for _, t := range s.Tools {
			if t.Name == tool {
				return v
			}
		}
	}
	return ""
}

// Parse parses one captured output of vendor's tool, detecting the form
// unless form is given.
func Parse(vendor, form string, data []byte) (*inventory.Snapshot, error) {
	s, err := Lookup(vendor)
	if err != nil {
		return nil, err
	}
	if form == "" {
		form = s.Detect(data)
		if form == "" {
			// Let the parser say which forms it expected.
			snap, err := s.Parse(data)
			return finish(snap), err
		}
	} else if !contains(s.Forms, form) {
		return nil, fmt.Errorf("%w %q for %s (known: %s)", ErrUnknownForm, form, vendor, strings.Join(s.Forms, ", "))
	}
	snap, err := s.ParseForm(form, data)
	return finish(snap), err
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
