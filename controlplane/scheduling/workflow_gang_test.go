package scheduling

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// TestWorkflowGangStep runs a workflow whose fan-out step is a gang
// through the live scheduler: the four training tasks (one device each,
// spread over two 2-device nodes) are released together by the workflow
// engine and placed all at once or not at all, and the step after them
// starts only when every one has succeeded.
func TestWorkflowGangStep(t *testing.T) {
	h := newHarness(t, Config{})
	h.addNode("nv-1", inventory.VendorNVIDIA, "A100-SXM4-40GB", 2, 40960)
	h.addNode("nv-2", inventory.VendorNVIDIA, "A100-SXM4-40GB", 2, 40960)
	st, ok := h.db.(workflow.Store)
	require.True(t, ok)
	eng, err := workflow.New(workflow.Options{Store: st, Now: h.clk.Now})
	require.NoError(t, err)
	w, _, err := workflow.Submit(h.ctx, st, workflow.Submission{Document: []byte(`
name: ddp
steps:
  - {name: prep, task: {command: [prep]}}
  - name: train
    depends: [prep]
    gang: true
    for_each: [0, 1, 2, 3]
    task: {command: [train], vendor: nvidia, device_count: 1, compute_percent: 100, qos: gold}
  - {name: eval, depends: [train], task: {command: [eval]}}
`)})
	require.NoError(t, err)
	stepsOf := func() map[string]*controlplane.WorkflowStep {
		rows, err := st.ListWorkflowSteps(h.ctx, w.ID)
		require.NoError(t, err)
		out := map[string]*controlplane.WorkflowStep{}
		for _, r := range rows {
			out[r.Name] = r
		}
		return out
	}
	for i := 0; i < 120; i++ {
		require.NoError(t, eng.Tick(h.ctx))
		h.step()
		steps := stepsOf()
		placed, members := 0, 0
		for k := range 4 {
			s := steps[fmt.Sprintf("train[%d]", k)]
			if s.TaskID == 0 {
				continue
			}
			members++
			if tk := h.task(s.TaskID); tk.State != controlplane.TaskSubmitted && tk.State != controlplane.TaskQueued {
				placed++
				require.Equal(t, fmt.Sprintf("wf%d-train-g0", w.ID), tk.Spec.Gang)
				require.Equal(t, 4, tk.Spec.GangSize)
			}
		}
		require.True(t, members == 0 || members == 4, "the gang's tasks are released together: %d", members)
		require.True(t, placed == 0 || placed == 4, "gang partly placed: %d of 4", placed)
		if steps["eval"].State == controlplane.StepRunning {
			for k := range 4 {
				require.Equal(t, controlplane.StepSucceeded, steps[fmt.Sprintf("train[%d]", k)].State)
			}
		}
		got, err := st.GetWorkflow(h.ctx, w.ID)
		require.NoError(t, err)
		if got.State.Terminal() {
			require.Equal(t, controlplane.WorkflowSucceeded, got.State, got.Reason)
			return
		}
	}
	t.Fatal("the workflow did not end")
}
