package workflow

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// refPattern finds {{ expression }} in a template string.
var refPattern = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// ref is one parsed {{…}} expression.
type ref struct {
	kind string // params, item, index, workflow, steps
	name string // param name, item key, workflow field, step name
	// for steps: field is exit_code, task_id, outputs or artifacts; key
	// names the output or artifact.
	field, key string
}

// parseRef parses the inside of {{…}}.
func parseRef(expr string) (ref, error) {
	parts := strings.Split(expr, ".")
	bad := fmt.Errorf("unknown reference {{%s}}: use params.NAME, item, item.KEY, index, workflow.id, workflow.name "+
		"or steps.NAME.exit_code|task_id|outputs.KEY|artifacts.KEY", expr)
	switch parts[0] {
	case "params":
		if len(parts) == 2 && parts[1] != "" {
			return ref{kind: "params", name: parts[1]}, nil
		}
	case "item":
		switch len(parts) {
		case 1:
			return ref{kind: "item"}, nil
		case 2:
			if parts[1] != "" {
				return ref{kind: "item", name: parts[1]}, nil
			}
		}
	case "index":
		if len(parts) == 1 {
			return ref{kind: "index"}, nil
		}
	case "workflow":
		if len(parts) == 2 && (parts[1] == "id" || parts[1] == "name") {
			return ref{kind: "workflow", name: parts[1]}, nil
		}
	case "steps":
		switch {
		case len(parts) == 3 && (parts[2] == "exit_code" || parts[2] == "task_id"):
			return ref{kind: "steps", name: parts[1], field: parts[2]}, nil
		case len(parts) == 4 && (parts[2] == "outputs" || parts[2] == "artifacts") && parts[3] != "":
			return ref{kind: "steps", name: parts[1], field: parts[2], key: parts[3]}, nil
		}
	}
	return ref{}, bad
}

// refs lists the references in s.
func refs(s string) ([]ref, error) {
	var out []ref
	for _, m := range refPattern.FindAllStringSubmatch(s, -1) {
		r, err := parseRef(m[1])
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// StepValues are what a finished step offers later steps.
type StepValues struct {
	ExitCode  string // "" while unknown
	TaskID    string
	Outputs   map[string]string
	Artifacts map[string]string
}

// scope resolves references while rendering one instance.
type scope struct {
	params map[string]string
	item   map[string]string // nil outside a fan-out
	index  int
	wfID   int64
	wfName string
	// steps returns the values of a step's instances in item order (one
	// for a step that is not fanned out); nil at validation time.
	steps func(name string) []StepValues
}

// render substitutes every reference in s. References were checked by
// Compile, so an error here means the values are missing at run time.
func (sc *scope) render(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	return refPattern.ReplaceAllStringFunc(s, func(m string) string {
		r, err := parseRef(refPattern.FindStringSubmatch(m)[1])
		if err != nil {
			return m
		}
		switch r.kind {
		case "params":
			return sc.params[r.name]
		case "item":
			return sc.item[r.name]
		case "index":
			return strconv.Itoa(sc.index)
		case "workflow":
			if r.name == "id" {
				return strconv.FormatInt(sc.wfID, 10)
			}
			return sc.wfName
		case "steps":
			if sc.steps == nil {
				return "" // validation: values are not known yet
			}
			var vals []string
			for _, v := range sc.steps(r.name) {
				switch r.field {
				case "exit_code":
					vals = append(vals, v.ExitCode)
				case "task_id":
					vals = append(vals, v.TaskID)
				case "outputs":
					vals = append(vals, v.Outputs[r.key])
				case "artifacts":
					vals = append(vals, v.Artifacts[r.key])
				}
			}
			// A fanned-out step's values, all instances in item order.
			return strings.Join(vals, ",")
		}
		return m
	})
}

func (sc *scope) renderAll(in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = sc.render(s)
	}
	return out
}

func (sc *scope) renderMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = sc.render(v)
	}
	return out
}
