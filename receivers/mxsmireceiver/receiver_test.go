package mxsmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, SMISpec(), "testdata/table-2.1.12-c500-pwrcap.txt")
}
