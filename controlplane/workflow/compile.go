package workflow

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/controlplane"
)

// Limits on a workflow; validation messages quote them.
const (
	MaxSteps     = 5000 // step instances after fan-out
	MaxFanOut    = 1000 // items of one for_each
	MaxNameLen   = 63
	MaxArtifacts = 32
)

// stepName is what a step may be called: it appears in {{steps.NAME…}}
// references and in instance names ("train[2]").
var stepName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// Compiled is a validated spec: steps in dependency order and every step
// instance.
type Compiled struct {
	Spec   *Spec
	params map[string]string // string parameters
	lists  map[string][]map[string]string
	index  map[string]int // step name → position in Spec.Steps
	deps   [][]int        // step → its dependencies' positions
	order  []int          // steps, dependencies first
	// Instances in dependency order; a step's instances are contiguous.
	Instances []Instance
	of        [][]int // step → its instances' positions in Instances
	handler   []bool  // step depends only on failure/always conditions
}

// Instance is one task-to-be: a step, or one item of a fanned-out step.
type Instance struct {
	Name  string // "prep", "train[1]"
	Step  int    // position in Spec.Steps
	Index int    // item index, -1 when not fanned out
	Item  map[string]string
}

// StepError is a validation error naming the step at fault.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return "step " + e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

func stepErr(step string, format string, args ...any) error {
	return &StepError{Step: step, Err: controlplane.Invalidf(format, args...)}
}

// Compile validates s with the parameter overrides and expands fan-outs:
// names, dependencies (unknown steps, cycles), conditions, references
// ({{…}} to unknown parameters, to steps that are not dependencies, item
// outside a fan-out) and every instance's task spec. Errors wrap
// controlplane.ErrInvalid and, when a step is at fault, are *StepError.
func Compile(s *Spec, overrides map[string]string) (*Compiled, error) {
	c := &Compiled{Spec: s, params: map[string]string{}, lists: map[string][]map[string]string{}, index: map[string]int{}}
	if err := c.header(overrides); err != nil {
		return nil, err
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		switch {
		case st.Name == "":
			return nil, controlplane.Invalidf("step %d has no name", i+1)
		case len(st.Name) > MaxNameLen || !stepName.MatchString(st.Name):
			return nil, stepErr(st.Name, "a step name is a letter then letters, digits, _ or -, at most %d characters", MaxNameLen)
		}
		if _, dup := c.index[st.Name]; dup {
			return nil, stepErr(st.Name, "two steps have this name")
		}
		c.index[st.Name] = i
	}
	c.deps = make([][]int, len(s.Steps))
	c.handler = make([]bool, len(s.Steps))
	for i := range s.Steps {
		if err := c.step(i); err != nil {
			return nil, err
		}
	}
	if err := c.sort(); err != nil {
		return nil, err
	}
	anc := c.ancestors()
	for _, i := range c.order {
		if err := c.checkRefs(i, anc[i]); err != nil {
			return nil, err
		}
	}
	if err := c.expand(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Compiled) header(overrides map[string]string) error {
	s := c.Spec
	switch {
	case strings.TrimSpace(s.Name) == "":
		return controlplane.Invalidf("the workflow needs a name")
	case len(s.Name) > 200:
		return controlplane.Invalidf("the workflow name is longer than 200 characters")
	case len(s.Steps) == 0:
		return controlplane.Invalidf("the workflow needs at least one step")
	case s.TimeoutSeconds < 0 || s.TimeoutSeconds > controlplane.MaxTimeoutSecond:
		return controlplane.Invalidf("timeout_seconds must be between 0 and %d", controlplane.MaxTimeoutSecond)
	case s.Priority < 0 || s.Priority > controlplane.MaxPriority:
		return controlplane.Invalidf("priority must be between 0 and %d", controlplane.MaxPriority)
	}
	switch s.FailurePolicy {
	case "":
		s.FailurePolicy = PolicyStop
	case PolicyStop, PolicyContinue:
	default:
		return controlplane.Invalidf("failure_policy must be stop or continue, not %q", s.FailurePolicy)
	}
	for k := range overrides {
		p, ok := s.Params[k]
		switch {
		case !ok:
			return controlplane.Invalidf("parameter %q is not declared in params", k)
		case p.Str == nil:
			return controlplane.Invalidf("parameter %q is a list and cannot be overridden by a string", k)
		}
	}
	for k, v := range overrides {
		s.Params[k] = Param{Str: &v}
	}
	for k, p := range s.Params {
		if !stepName.MatchString(k) {
			return controlplane.Invalidf("parameter name %q: a letter then letters, digits, _ or -", k)
		}
		if p.Str != nil {
			c.params[k] = *p.Str
		} else {
			c.lists[k] = p.List
		}
	}
	return nil
}

// step checks one step's own fields and records its dependencies.
func (c *Compiled) step(i int) error {
	st := &c.Spec.Steps[i]
	switch st.When {
	case "":
		st.When = "all"
	case "all", "any":
	default:
		return stepErr(st.Name, "when must be all or any, not %q", st.When)
	}
	switch {
	case st.Retries < 0 || st.Retries > controlplane.MaxRetries:
		return stepErr(st.Name, "retries must be between 0 and %d", controlplane.MaxRetries)
	case st.TimeoutSeconds < 0 || st.TimeoutSeconds > controlplane.MaxTimeoutSecond:
		return stepErr(st.Name, "timeout_seconds must be between 0 and %d", controlplane.MaxTimeoutSecond)
	case len(st.Artifacts) > MaxArtifacts:
		return stepErr(st.Name, "at most %d artifacts", MaxArtifacts)
	case st.Gang && st.ForEach == nil:
		return stepErr(st.Name, "gang: true schedules the instances of a for_each together; this step has no for_each")
	}
	for k := range st.Artifacts {
		if !stepName.MatchString(k) {
			return stepErr(st.Name, "artifact name %q: a letter then letters, digits, _ or -", k)
		}
	}
	seen := map[string]bool{}
	handler := len(st.Depends) > 0
	for _, d := range st.Depends {
		j, ok := c.index[d.Step]
		switch {
		case !ok:
			return stepErr(st.Name, "depends on unknown step %q", d.Step)
		case j == i:
			return stepErr(st.Name, "depends on itself")
		case seen[d.Step]:
			return stepErr(st.Name, "depends on %q twice", d.Step)
		}
		switch d.On {
		case OnSuccess:
			handler = false
		case OnFailure, OnAlways:
		default:
			return stepErr(st.Name, "dependency on %q: on must be success, failure or always, not %q", d.Step, d.On)
		}
		seen[d.Step] = true
		c.deps[i] = append(c.deps[i], j)
	}
	c.handler[i] = handler
	return nil
}

// sort orders the steps dependencies first (Kahn) and names a step on a
// cycle if there is one.
func (c *Compiled) sort() error {
	n := len(c.Spec.Steps)
	indeg := make([]int, n)
	users := make([][]int, n)
	for i, ds := range c.deps {
		indeg[i] = len(ds)
		for _, j := range ds {
			users[j] = append(users[j], i)
		}
	}
	queue := make([]int, 0, n)
	for i := range n {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		c.order = append(c.order, i)
		for _, u := range users[i] {
			if indeg[u]--; indeg[u] == 0 {
				queue = append(queue, u)
			}
		}
	}
	if len(c.order) == n {
		return nil
	}
	// Every step left has a dependency left; walking dependencies from one
	// of them must come back to a step already seen: that is the cycle.
	at := -1
	for i := range n {
		if indeg[i] > 0 {
			at = i
			break
		}
	}
	pos := map[int]int{}
	var path []string
	for {
		if p, ok := pos[at]; ok {
			cycle := append(path[p:], c.Spec.Steps[at].Name)
			return stepErr(c.Spec.Steps[at].Name, "dependency cycle: %s", strings.Join(cycle, " → "))
		}
		pos[at] = len(path)
		path = append(path, c.Spec.Steps[at].Name)
		for _, j := range c.deps[at] {
			if indeg[j] > 0 {
				at = j
				break
			}
		}
	}
}

// ancestors returns, per step, every step it transitively depends on.
func (c *Compiled) ancestors() []map[int]bool {
	anc := make([]map[int]bool, len(c.Spec.Steps))
	for _, i := range c.order {
		a := map[int]bool{}
		for _, j := range c.deps[i] {
			a[j] = true
			for k := range anc[j] {
				a[k] = true
			}
		}
		anc[i] = a
	}
	return anc
}

// templated returns every string of the step that may hold references.
func templated(st *Step) []string {
	t := &st.Task
	out := []string{t.Name, t.Image, t.Vendor, t.QoS, t.Project, t.Gang}
	out = append(out, t.Command...)
	out = append(out, t.Args...)
	out = append(out, t.Models...)
	for _, m := range []map[string]string{t.Env, t.Labels} {
		for _, v := range m {
			out = append(out, v)
		}
	}
	return out
}

func (c *Compiled) checkRefs(i int, anc map[int]bool) error {
	st := &c.Spec.Steps[i]
	fanned := st.ForEach != nil
	check := func(s string, artifact bool) error {
		rs, err := refs(s)
		if err != nil {
			return &StepError{Step: st.Name, Err: controlplane.Invalidf("%v", err)}
		}
		for _, r := range rs {
			switch r.kind {
			case "params":
				if _, ok := c.params[r.name]; !ok {
					if _, list := c.lists[r.name]; list {
						return stepErr(st.Name, "parameter %q is a list: use it in for_each", r.name)
					}
					return stepErr(st.Name, "unknown parameter %q", r.name)
				}
			case "item", "index":
				if !fanned {
					return stepErr(st.Name, "{{%s}} is only defined in a step with for_each", r.kind)
				}
			case "steps":
				j, ok := c.index[r.name]
				switch {
				case artifact:
					return stepErr(st.Name, "artifact paths may use params, item, index and workflow, not other steps' values")
				case !ok:
					return stepErr(st.Name, "references unknown step %q", r.name)
				case !anc[j]:
					return stepErr(st.Name, "references step %q, which it does not depend on", r.name)
				case r.field == "artifacts":
					if _, ok := c.Spec.Steps[j].Artifacts[r.key]; !ok {
						return stepErr(st.Name, "step %q declares no artifact %q", r.name, r.key)
					}
				}
			}
		}
		return nil
	}
	for _, s := range templated(st) {
		if err := check(s, false); err != nil {
			return err
		}
	}
	for _, s := range st.Artifacts {
		if err := check(s, true); err != nil {
			return err
		}
	}
	return nil
}

// items resolves a step's for_each.
func (c *Compiled) items(st *Step) ([]map[string]string, error) {
	fe := st.ForEach
	if fe.Str != nil {
		m := refPattern.FindStringSubmatch(strings.TrimSpace(*fe.Str))
		if m == nil || m[0] != strings.TrimSpace(*fe.Str) {
			return nil, stepErr(st.Name, "for_each is a list or \"{{params.NAME}}\" naming a list parameter")
		}
		r, err := parseRef(m[1])
		if err != nil || r.kind != "params" {
			return nil, stepErr(st.Name, "for_each is a list or \"{{params.NAME}}\" naming a list parameter")
		}
		l, ok := c.lists[r.name]
		if !ok {
			return nil, stepErr(st.Name, "for_each: %q is not a list parameter", r.name)
		}
		return l, nil
	}
	return fe.List, nil
}

// expand creates the instances and validates each one's task spec.
func (c *Compiled) expand() error {
	c.of = make([][]int, len(c.Spec.Steps))
	for _, i := range c.order {
		st := &c.Spec.Steps[i]
		if st.ForEach == nil {
			c.of[i] = []int{len(c.Instances)}
			c.Instances = append(c.Instances, Instance{Name: st.Name, Step: i, Index: -1})
		} else {
			items, err := c.items(st)
			if err != nil {
				return err
			}
			if len(items) == 0 || len(items) > MaxFanOut {
				return stepErr(st.Name, "for_each needs 1 to %d items, not %d", MaxFanOut, len(items))
			}
			for k, it := range items {
				c.of[i] = append(c.of[i], len(c.Instances))
				c.Instances = append(c.Instances, Instance{Name: st.Name + "[" + strconv.Itoa(k) + "]", Step: i, Index: k, Item: it})
			}
		}
		if len(c.Instances) > MaxSteps {
			return controlplane.Invalidf("the workflow expands to more than %d step instances", MaxSteps)
		}
	}
	probe := &controlplane.Workflow{ID: 1, Name: c.Spec.Name, Tenant: "", Generation: 0}
	for k := range c.Instances {
		spec := c.TaskSpec(k, probe, nil)
		if err := spec.Validate(); err != nil {
			var inv error = err
			if !errors.Is(err, controlplane.ErrInvalid) {
				inv = controlplane.Invalidf("%v", err)
			}
			return &StepError{Step: c.Instances[k].Name, Err: inv}
		}
	}
	return nil
}

// Labels put on every step's task.
const (
	LabelWorkflow = controlplane.ReservedLabelPrefix + "workflow"
	LabelStep     = controlplane.ReservedLabelPrefix + "step"
)

// TaskSpec renders instance k's task for workflow w. steps gives the
// values of finished steps (nil at validation). The task runs in the
// workflow's tenant; project and priority are the step's, else the
// workflow's.
func (c *Compiled) TaskSpec(k int, w *controlplane.Workflow, steps func(name string) []StepValues) controlplane.TaskSpec {
	in := c.Instances[k]
	st := &c.Spec.Steps[in.Step]
	sc := &scope{params: c.params, item: in.Item, index: in.Index, wfID: w.ID, wfName: w.Name, steps: steps}
	t := &st.Task
	spec := controlplane.TaskSpec{Name: sc.render(t.Name), Command: sc.renderAll(t.Command), Image: sc.render(t.Image),
		Args: sc.renderAll(t.Args), Env: sc.renderMap(t.Env), DeviceCount: t.DeviceCount, MemoryMiB: t.MemoryMiB,
		ComputePercent: t.ComputePercent, Vendor: sc.render(t.Vendor), Models: sc.renderAll(t.Models),
		QoS: controlplane.QoS(sc.render(t.QoS)), Priority: t.Priority, TimeoutSeconds: st.TimeoutSeconds,
		MaxRetries: st.Retries, Labels: sc.renderMap(t.Labels), Tenant: w.Tenant, Project: sc.render(t.Project),
		CPUMilli: t.CPUMilli, HostMemoryMiB: t.HostMemoryMiB, RDMA: t.RDMA}
	if spec.Name == "" {
		spec.Name = w.Name + "/" + in.Name
		if len(spec.Name) > controlplane.MaxTaskNameLen {
			spec.Name = spec.Name[len(spec.Name)-controlplane.MaxTaskNameLen:]
		}
	}
	if spec.Project == "" {
		spec.Project = w.Project
	}
	if spec.Priority == 0 {
		spec.Priority = w.Priority
	}
	switch {
	case st.Gang:
		// One gang per fan-out and generation: all instances or none.
		spec.Gang = fmt.Sprintf("wf%d-%s-g%d", w.ID, st.Name, w.Generation)
		spec.GangSize = len(c.of[in.Step])
	case t.Gang != "":
		spec.Gang = fmt.Sprintf("wf%d-%s", w.ID, sc.render(t.Gang))
		spec.GangSize = t.GangSize
	}
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels[LabelWorkflow] = strconv.FormatInt(w.ID, 10)
	spec.Labels[LabelStep] = in.Name
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	spec.Env["HETEROFLOW_WORKFLOW_ID"] = strconv.FormatInt(w.ID, 10)
	spec.Env["HETEROFLOW_STEP"] = in.Name
	for name, path := range c.Artifacts(k, w) {
		spec.Env["HETEROFLOW_ARTIFACT_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] = path
	}
	return spec
}

// Artifacts renders instance k's artifact paths.
func (c *Compiled) Artifacts(k int, w *controlplane.Workflow) map[string]string {
	in := c.Instances[k]
	st := &c.Spec.Steps[in.Step]
	if len(st.Artifacts) == 0 {
		return nil
	}
	sc := &scope{params: c.params, item: in.Item, index: in.Index, wfID: w.ID, wfName: w.Name}
	return sc.renderMap(st.Artifacts)
}

// StepNames lists the spec's step names in dependency order.
func (c *Compiled) StepNames() []string {
	out := make([]string, len(c.order))
	for i, j := range c.order {
		out[i] = c.Spec.Steps[j].Name
	}
	return out
}

// Deps returns the names of a step's dependencies, sorted.
func (c *Compiled) Deps(step string) []string {
	i, ok := c.index[step]
	if !ok {
		return nil
	}
	var out []string
	for _, j := range c.deps[i] {
		out = append(out, c.Spec.Steps[j].Name)
	}
	sort.Strings(out)
	return out
}
