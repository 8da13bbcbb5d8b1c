package brsmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, SMISpec(), "testdata/csv-br104-2gpu.txt")
}
