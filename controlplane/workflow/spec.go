package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Spec is a workflow document. Field names are the JSON/YAML keys.
type Spec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Params are the workflow's parameters: a string, or a list (of
	// strings or of string maps) to fan out over. Submit may override them.
	Params         map[string]Param `json:"params,omitempty"`
	Project        string           `json:"project,omitempty"`
	Priority       int              `json:"priority,omitempty"`
	TimeoutSeconds int              `json:"timeout_seconds,omitempty"`
	// FailurePolicy: "stop" (default) cancels running steps and starts no
	// more after a failure, except handlers (steps that depend only on
	// failure or always); "continue" lets independent branches go on.
	FailurePolicy string `json:"failure_policy,omitempty"`
	Steps         []Step `json:"steps"`
}

// Failure policies.
const (
	PolicyStop     = "stop"
	PolicyContinue = "continue"
)

// Step is one node of the DAG.
type Step struct {
	Name    string `json:"name"`
	Depends []Dep  `json:"depends,omitempty"`
	// When: "all" (default) needs every dependency's condition; "any" one.
	When string `json:"when,omitempty"`
	// ForEach fans the step out: one task per item. A list, or a
	// reference "{{params.NAME}}" to a list parameter.
	ForEach *Param `json:"for_each,omitempty"`
	// Gang schedules all fan-out instances together (all or none).
	Gang           bool `json:"gang,omitempty"`
	Retries        int  `json:"retries,omitempty"`
	TimeoutSeconds int  `json:"timeout_seconds,omitempty"`
	// Artifacts name paths on shared storage the step writes (templates
	// allowed); the task sees each as HETEROFLOW_ARTIFACT_<KEY>, later
	// steps as {{steps.NAME.artifacts.KEY}}.
	Artifacts map[string]string `json:"artifacts,omitempty"`
	Task      TaskTemplate      `json:"task"`
}

// Dependency conditions.
const (
	OnSuccess = "success"
	OnFailure = "failure"
	OnAlways  = "always"
)

// Dep is one dependency: a step name, or {step, on}.
type Dep struct {
	Step string `json:"step"`
	On   string `json:"on,omitempty"`
}

// UnmarshalJSON accepts "name" as well as {"step": "name", "on": "failure"}.
func (d *Dep) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*d = Dep{Step: s, On: OnSuccess}
		return nil
	}
	type plain Dep
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return fmt.Errorf("a dependency is a step name or {step, on}: %w", err)
	}
	if p.On == "" {
		p.On = OnSuccess
	}
	*d = Dep(p)
	return nil
}

// Param is a parameter value: a string, or a list of strings or of string maps.
type Param struct {
	Str  *string
	List []map[string]string // a list of plain strings is stored as {"": value}
}

// UnmarshalJSON reads a string (numbers and booleans become strings) or a list.
func (p *Param) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		p.Str = &x
	case float64, bool:
		s := strings.TrimSpace(string(b))
		p.Str = &s
	case []any:
		p.List = make([]map[string]string, 0, len(x))
		for i, it := range x {
			switch e := it.(type) {
			case string:
				p.List = append(p.List, map[string]string{"": e})
			case float64, bool:
				p.List = append(p.List, map[string]string{"": fmt.Sprint(e)})
			case map[string]any:
				m := make(map[string]string, len(e))
				for k, val := range e {
					switch s := val.(type) {
					case string:
						m[k] = s
					case float64, bool:
						m[k] = fmt.Sprint(s)
					default:
						return fmt.Errorf("list item %d: value of %q must be a string or number", i, k)
					}
				}
				p.List = append(p.List, m)
			default:
				return fmt.Errorf("list item %d must be a string, a number or a map of strings", i)
			}
		}
	default:
		return fmt.Errorf("a parameter is a string, a number or a list")
	}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (p Param) MarshalJSON() ([]byte, error) {
	switch {
	case p.Str != nil:
		return json.Marshal(*p.Str)
	}
	out := make([]any, len(p.List))
	for i, m := range p.List {
		if v, ok := m[""]; ok && len(m) == 1 {
			out[i] = v
		} else {
			out[i] = m
		}
	}
	return json.Marshal(out)
}

// TaskTemplate is a step's task spec; string fields may hold {{…}}
// references (see Compile). Tenant and owner come from the workflow.
type TaskTemplate struct {
	Name           string            `json:"name,omitempty"`
	Command        []string          `json:"command,omitempty"`
	Image          string            `json:"image,omitempty"`
	Args           []string          `json:"args,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	DeviceCount    int               `json:"device_count,omitempty"`
	MemoryMiB      int               `json:"memory_mib,omitempty"`
	ComputePercent int               `json:"compute_percent,omitempty"`
	Vendor         string            `json:"vendor,omitempty"`
	Models         []string          `json:"models,omitempty"`
	QoS            string            `json:"qos,omitempty"`
	Priority       int               `json:"priority,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Project        string            `json:"project,omitempty"`
	CPUMilli       int               `json:"cpu_milli,omitempty"`
	HostMemoryMiB  int               `json:"host_memory_mib,omitempty"`
	RDMA           bool              `json:"rdma,omitempty"`
	Gang           string            `json:"gang,omitempty"`
	GangSize       int               `json:"gang_size,omitempty"`
}

// MaxSpecBytes bounds a submitted document.
const MaxSpecBytes = 512 << 10

// Parse reads a YAML or JSON document (JSON is YAML) strictly: unknown keys
// are errors, so a typo is reported instead of ignored.
func Parse(doc []byte) (*Spec, error) {
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, controlplane.Invalidf("the workflow document is empty")
	}
	if len(doc) > MaxSpecBytes {
		return nil, controlplane.Invalidf("the workflow document is larger than %d bytes", MaxSpecBytes)
	}
	var tree any
	if err := yaml.Unmarshal(doc, &tree); err != nil {
		return nil, controlplane.Invalidf("the workflow document is not valid YAML or JSON: %v", err)
	}
	js, err := json.Marshal(jsonable(tree))
	if err != nil {
		return nil, controlplane.Invalidf("the workflow document: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, controlplane.Invalidf("the workflow document: %v", err)
	}
	// A step's own labels stay out of the ones the engine sets (the
	// workflow and step of every task), whoever submits. Checked on a new
	// document, not on Load, so a workflow stored before keeps running.
	for _, st := range s.Steps {
		if err := controlplane.CheckUnreservedLabels(st.Task.Labels); err != nil {
			return nil, &StepError{Step: st.Name, Err: err}
		}
	}
	return &s, nil
}

// jsonable turns YAML's map[any]any (from non-string keys) into JSON-ready maps.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}
