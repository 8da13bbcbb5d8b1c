package cnmonreceiver

import (
	"go.opentelemetry.io/collector/receiver"

	"github.com/heteroflow/heteroflow/receivers/cnmonreceiver/internal/metadata"
	"github.com/heteroflow/heteroflow/receivers/internal/smireceiver"
)

// NewFactory returns the cnmon receiver factory.
func NewFactory() receiver.Factory { return newReceiverFactory(nil) }

// newReceiverFactory lets tests feed canned CLI output through run.
func newReceiverFactory(run smireceiver.Runner) receiver.Factory {
	return smireceiver.NewFactory(receiverSpec(), run)
}

func receiverSpec() smireceiver.Spec {
	return smireceiver.Spec{
		Type: metadata.Type, Stability: metadata.MetricsStability,
		ScopeName: metadata.ScopeName, SMI: SMISpec(),
	}
}
