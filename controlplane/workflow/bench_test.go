package workflow_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/sqlite"
	"github.com/heteroflow/heteroflow/controlplane/workflow"
)

// dagDoc is a workflow of layers×width steps: every step of a layer
// depends on three steps of the layer before (the first layer has none),
// and references one dependency's output.
func dagDoc(layers, width int) string {
	var b strings.Builder
	b.WriteString("name: bench\nsteps:\n")
	for l := range layers {
		for i := range width {
			fmt.Fprintf(&b, "  - name: s%d-%d\n", l, i)
			if l > 0 {
				fmt.Fprintf(&b, "    depends: [s%d-%d, s%d-%d, s%d-%d]\n", l-1, i, l-1, (i+1)%width, l-1, (i+7)%width)
				fmt.Fprintf(&b, "    task: {command: [run, \"{{steps.s%d-%d.outputs.x}}\"], cpu_milli: 100}\n", l-1, i)
			} else {
				b.WriteString("    task: {command: [run], cpu_milli: 100}\n")
			}
		}
	}
	return b.String()
}

// BenchmarkSubmitAndRelease measures what a submit costs until the ready
// steps have their tasks: parse and validate the document, store the
// workflow and its steps, and one engine pass that releases every ready
// step (creating its task in the same transaction that marks it running).
func BenchmarkSubmitAndRelease(b *testing.B) {
	for _, shape := range []struct{ layers, width int }{{10, 100}, {1, 1000}} {
		doc := []byte(dagDoc(shape.layers, shape.width))
		b.Run(fmt.Sprintf("steps=%d/ready=%d", shape.layers*shape.width, shape.width), func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
			require.NoError(b, err)
			defer db.Close()
			u := &controlplane.User{Username: "bench", Role: controlplane.RoleUser, PasswordHash: "x"}
			require.NoError(b, db.CreateUser(ctx, u))
			eng, err := workflow.New(workflow.Options{Store: db})
			require.NoError(b, err)
			b.ResetTimer()
			for range b.N {
				w, _, err := workflow.Submit(ctx, db, workflow.Submission{Document: doc, OwnerID: u.ID})
				if err != nil {
					b.Fatal(err)
				}
				if err := eng.Tick(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				rows, err := db.ListWorkflowSteps(ctx, w.ID)
				require.NoError(b, err)
				running := 0
				for _, r := range rows {
					if r.State == controlplane.StepRunning {
						running++
					}
				}
				require.Equal(b, shape.width, running, "every ready step released")
				// Take it out of the engine's active set before the next round.
				_, err = workflow.Cancel(ctx, db, w.ID, "bench", "done")
				require.NoError(b, err)
				require.NoError(b, eng.Tick(ctx))
				require.NoError(b, eng.Tick(ctx))
				b.StartTimer()
			}
		})
	}
}

// BenchmarkCompile is validation alone: parse, names, cycles, references
// and every instance's task spec.
func BenchmarkCompile(b *testing.B) {
	doc := []byte(dagDoc(10, 100))
	for range b.N {
		s, err := workflow.Parse(doc)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := workflow.Compile(s, nil); err != nil {
			b.Fatal(err)
		}
	}
}
