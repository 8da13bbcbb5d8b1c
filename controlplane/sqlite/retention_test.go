package sqlite_test

import (
	"testing"

	"github.com/heteroflow/heteroflow/controlplane/storetest"
)

func TestRetentionConformance(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) storetest.RetentionStore { return openTest(t) })
}
