package efsmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, SMISpec(), "testdata/table-s60-1dev.txt")
}
