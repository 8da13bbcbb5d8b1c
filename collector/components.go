package collector

import (
	"fmt"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusremotewriteexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/hostmetricsreceiver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/heteroflow/heteroflow/collector/hostresource"
	"github.com/heteroflow/heteroflow/receivers/brsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/cnmonreceiver"
	"github.com/heteroflow/heteroflow/receivers/efsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/hysmireceiver"
	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/receivers/ixsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mthreadsgmireceiver"
	"github.com/heteroflow/heteroflow/receivers/mxsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/npusmireceiver"
	"github.com/heteroflow/heteroflow/receivers/nvidiasmireceiver"
	"github.com/heteroflow/heteroflow/receivers/rocmsmireceiver"
	"github.com/heteroflow/heteroflow/receivers/xpusmireceiver"
)

// vendorReceivers maps each vendor to its receiver factory, in
// inventory.Vendors order.
var vendorReceivers = []struct {
	vendor  string
	factory func() receiver.Factory
}{
	{inventory.VendorNVIDIA, nvidiasmireceiver.NewFactory},
	{inventory.VendorAMD, rocmsmireceiver.NewFactory},
	{inventory.VendorHygon, hysmireceiver.NewFactory},
	{inventory.VendorAscend, npusmireceiver.NewFactory},
	{inventory.VendorCambricon, cnmonreceiver.NewFactory},
	{inventory.VendorKunlunxin, xpusmireceiver.NewFactory},
	{inventory.VendorMThreads, mthreadsgmireceiver.NewFactory},
	{inventory.VendorBiren, brsmireceiver.NewFactory},
	{inventory.VendorIluvatar, ixsmireceiver.NewFactory},
	{inventory.VendorMetaX, mxsmireceiver.NewFactory},
	{inventory.VendorEnflame, efsmireceiver.NewFactory},
}

// ReceiverType returns the receiver type name for a vendor (nvidia →
// nvidia_smi), or an error naming the known vendors.
func ReceiverType(vendor string) (component.Type, error) {
	for _, v := range vendorReceivers {
		if v.vendor == vendor {
			return v.factory().Type(), nil
		}
	}
	return component.Type{}, fmt.Errorf("unknown vendor %q (known: %v)", vendor, inventory.Vendors)
}

// Components returns every component of the distribution.
func Components() (otelcol.Factories, error) {
	recv := []receiver.Factory{hostmetricsreceiver.NewFactory()}
	for _, v := range vendorReceivers {
		recv = append(recv, v.factory())
	}
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap(recv...); err != nil {
		return f, fmt.Errorf("receivers: %w", err)
	}
	if f.Processors, err = otelcol.MakeFactoryMap(batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(), hostresource.NewFactory()); err != nil {
		return f, fmt.Errorf("processors: %w", err)
	}
	if f.Exporters, err = otelcol.MakeFactoryMap(otlphttpexporter.NewFactory(),
		prometheusremotewriteexporter.NewFactory(), prometheusexporter.NewFactory(),
		debugexporter.NewFactory()); err != nil {
		return f, fmt.Errorf("exporters: %w", err)
	}
	return f, nil
}
