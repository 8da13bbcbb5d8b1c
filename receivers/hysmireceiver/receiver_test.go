package hysmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver/smireceivertest"
	"github.com/heteroflow/heteroflow/receivers/inventory"
)

func TestReceiverLifecycle(t *testing.T) {
	smireceivertest.Run(t, newReceiverFactory, inventory.VendorHygon, receiverTool)
}
