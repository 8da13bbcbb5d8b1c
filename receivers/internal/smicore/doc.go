// Package smicore runs a vendor's management CLI and turns its output into an
// inventory.Snapshot: the Spec type each vendor package fills in, Collect,
// Merge, the exec Runner and the sentinel errors.
//
// It sits below both the vendor packages (receivers/<x>receiver, which hold
// the parsers, their Spec and their OTel receiver factory) and the registry
// (receivers/smi, which imports every vendor package), so a vendor receiver
// can collect through its own Spec without an import cycle.
package smicore
