package workflow

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
)

const pipeline = `
name: train-eval
params:
  dataset: /shared/data/v1
  targets:
    - {vendor: nvidia, model: H100}
    - {vendor: ascend, model: Ascend910B}
failure_policy: continue
timeout_seconds: 3600
priority: 40
steps:
  - name: preprocess
    task:
      command: [python, prep.py, --in, "{{params.dataset}}"]
      cpu_milli: 2000
    artifacts:
      shards: /shared/wf-{{workflow.id}}/shards
  - name: train
    depends: [preprocess]
    for_each: "{{params.targets}}"
    retries: 2
    timeout_seconds: 600
    task:
      command: [python, train.py, --data, "{{steps.preprocess.artifacts.shards}}", --model, "{{item.model}}"]
      vendor: "{{item.vendor}}"
      device_count: 1
      memory_mib: 8192
    artifacts:
      model: /shared/wf-{{workflow.id}}/model-{{index}}.pt
  - name: evaluate
    depends: [train]
    task:
      command: [python, eval.py, "{{steps.train.artifacts.model}}", "{{steps.train.outputs.loss}}"]
  - name: notify
    depends:
      - {step: evaluate, on: always}
    task:
      command: [notify, "exit={{steps.evaluate.exit_code}}"]
`

func compile(t *testing.T, doc string, params map[string]string) (*Compiled, error) {
	t.Helper()
	s, err := Parse([]byte(doc))
	if err != nil {
		return nil, err
	}
	return Compile(s, params)
}

func TestCompilePipeline(t *testing.T) {
	c, err := compile(t, pipeline, map[string]string{"dataset": "/shared/data/v2"})
	require.NoError(t, err)
	var names []string
	for _, in := range c.Instances {
		names = append(names, in.Name)
	}
	require.Equal(t, []string{"preprocess", "train[0]", "train[1]", "evaluate", "notify"}, names)
	w := &controlplane.Workflow{ID: 42, Name: "train-eval", Tenant: "lab", Project: "vision", Priority: 40}
	pre := c.TaskSpec(0, w, nil)
	require.Equal(t, []string{"python", "prep.py", "--in", "/shared/data/v2"}, pre.Command, "override applied")
	require.Equal(t, "/shared/wf-42/shards", pre.Env["HETEROFLOW_ARTIFACT_SHARDS"])
	require.Equal(t, "lab", pre.Tenant)
	require.Equal(t, "vision", pre.Project)
	require.Equal(t, 40, pre.Priority, "inherited from the workflow")
	require.Equal(t, "42", pre.Labels[LabelWorkflow])
	require.Equal(t, "train-eval/preprocess", pre.Name)

	tr := c.TaskSpec(2, w, func(name string) []StepValues { return nil })
	require.Equal(t, "ascend", tr.Vendor)
	require.Equal(t, []string{"python", "train.py", "--data", "", "--model", "Ascend910B"}, tr.Command)
	require.Equal(t, 2, tr.MaxRetries)
	require.Equal(t, 600, tr.TimeoutSeconds)
	require.Equal(t, "train[1]", tr.Env["HETEROFLOW_STEP"])

	vals := map[string][]StepValues{
		"train": {{Outputs: map[string]string{"loss": "0.1"}, Artifacts: map[string]string{"model": "/m0"}},
			{Outputs: map[string]string{"loss": "0.2"}, Artifacts: map[string]string{"model": "/m1"}}},
	}
	ev := c.TaskSpec(3, w, func(name string) []StepValues { return vals[name] })
	require.Equal(t, []string{"python", "eval.py", "/m0,/m1", "0.1,0.2"}, ev.Command, "fan-out values joined in item order")
}

func TestCompileRejects(t *testing.T) {
	cases := []struct {
		name, doc, step, msg string
	}{
		{"cycle", `{name: w, steps: [{name: a, depends: [c], task: {command: [x]}}, {name: b, depends: [a], task: {command: [x]}}, {name: c, depends: [b], task: {command: [x]}}]}`,
			"", "dependency cycle"},
		{"unknown dependency", `{name: w, steps: [{name: a, depends: [ghost], task: {command: [x]}}]}`, "a", `unknown step "ghost"`},
		{"self", `{name: w, steps: [{name: a, depends: [a], task: {command: [x]}}]}`, "a", "itself"},
		{"duplicate", `{name: w, steps: [{name: a, task: {command: [x]}}, {name: a, task: {command: [x]}}]}`, "a", "two steps"},
		{"bad condition", `{name: w, steps: [{name: a, task: {command: [x]}}, {name: b, depends: [{step: a, on: maybe}], task: {command: [x]}}]}`, "b", "success, failure or always"},
		{"unknown param", `{name: w, steps: [{name: a, task: {command: ["{{params.nope}}"]}}]}`, "a", `unknown parameter "nope"`},
		{"ref not a dependency", `{name: w, steps: [{name: a, task: {command: [x]}}, {name: b, task: {command: ["{{steps.a.exit_code}}"]}}]}`, "b", "does not depend on"},
		{"ref unknown step", `{name: w, steps: [{name: b, task: {command: ["{{steps.zz.exit_code}}"]}}]}`, "b", `unknown step "zz"`},
		{"bad ref syntax", `{name: w, steps: [{name: b, task: {command: ["{{steps.a}}"]}}]}`, "b", "unknown reference"},
		{"item outside fan-out", `{name: w, steps: [{name: b, task: {command: ["{{item}}"]}}]}`, "b", "for_each"},
		{"undeclared artifact", `{name: w, steps: [{name: a, task: {command: [x]}}, {name: b, depends: [a], task: {command: ["{{steps.a.artifacts.m}}"]}}]}`, "b", `no artifact "m"`},
		{"bad task", `{name: w, steps: [{name: a, task: {command: [x], device_count: 1, compute_percent: 5}}]}`, "a", "compute_percent"},
		{"bad vendor from item", `{name: w, steps: [{name: t, for_each: [nvidia, voodoo], task: {command: [x], vendor: "{{item}}"}}]}`, "t[1]", "vendor"},
		{"no command", `{name: w, steps: [{name: a, task: {}}]}`, "a", "command or image"},
		{"empty fan-out", `{name: w, steps: [{name: a, for_each: [], task: {command: [x]}}]}`, "a", "1 to 1000 items"},
		{"for_each not a list param", `{name: w, params: {p: s}, steps: [{name: a, for_each: "{{params.p}}", task: {command: [x]}}]}`, "a", "not a list parameter"},
		{"gang without fan-out", `{name: w, steps: [{name: a, gang: true, task: {command: [x]}}]}`, "a", "gang"},
		{"bad name", `{name: w, steps: [{name: "a.b", task: {command: [x]}}]}`, "a.b", "letter"},
		{"reserved label", `{name: w, steps: [{name: a, task: {command: [x], labels: {heteroflow.hub/owner: bob}}}]}`, "a", "reserved"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := compile(t, tc.doc, nil)
			require.Error(t, err)
			require.ErrorIs(t, err, controlplane.ErrInvalid)
			require.Contains(t, err.Error(), tc.msg)
			var se *StepError
			if tc.step != "" {
				require.True(t, errors.As(err, &se), "names the step: %v", err)
				require.Equal(t, tc.step, se.Step)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown key":  "name: w\nstepz: []\n",
		"not yaml":     "name: [unclosed\n",
		"empty":        "  \n",
		"bad dep form": `{name: w, steps: [{name: a, depends: [{step: b, when: x}], task: {command: [x]}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc))
			require.ErrorIs(t, err, controlplane.ErrInvalid)
		})
	}
	s, err := Parse([]byte("name: w\nparams: {p: a}\nsteps: [{name: a, task: {command: [x]}}]\n"))
	require.NoError(t, err)
	_, err = Compile(s, map[string]string{"q": "1"})
	require.ErrorContains(t, err, `"q" is not declared`)
}

func TestCompileCycleNamesAStepOnIt(t *testing.T) {
	_, err := compile(t, `{name: w, steps: [{name: root, task: {command: [x]}}, {name: a, depends: [root, b], task: {command: [x]}}, {name: b, depends: [a], task: {command: [x]}}]}`, nil)
	var se *StepError
	require.True(t, errors.As(err, &se))
	require.Contains(t, []string{"a", "b"}, se.Step)
	require.Contains(t, err.Error(), "a → b → a")
}
