package nvidiasmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, SMISpec(), "testdata/xml-550-h100-mig.txt")
}
