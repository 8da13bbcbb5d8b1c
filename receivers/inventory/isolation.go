package inventory

import "github.com/heteroflow/heteroflow/receivers/vendorcatalog"

// IsolationFor returns the isolation capabilities of a (vendor, model) from
// the vendor catalog (receivers/vendorcatalog, the one capability table):
// MIG profiles, vNPU templates, the vendor's Silver mechanism and whether it
// time-shares (Bronze). Receivers fill Device.Isolation with it.
func IsolationFor(vendor, model string) Isolation {
	return vendorcatalog.IsolationFor(vendor, model)
}
