package sqlite_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestWorkflowConformance(t *testing.T) {
	storetest.RunWorkflows(t, func(t *testing.T) storetest.WorkflowStore { return openTest(t) })
}
