package mthreadsgmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, SMISpec(), "testdata/table-2.x-s4000.txt")
}
