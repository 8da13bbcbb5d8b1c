// Package vendorcatalog is the one table of accelerator vendors: for each
// vendor its management CLIs and their output forms, the device-selection
// variables (process and container runtime), the /dev nodes (detection globs,
// per-device nodes a container needs, shared control nodes), container
// runtime hints, and the isolation each model really offers per QoS tier
// (MIG profiles, vNPU templates, MPS / HAMi-core driver limits, vMLU/sMLU,
// vDCU, MUSA slicing).
//
// It sits on the lowest floor and imports nothing of the project: the
// inventory model, the CLI registry (receivers/smi), the collector, the
// agent's runner and the scheduler all read it. Adding a vendor is one
// Entry here plus its parser package (receivers/<vendor>receiver), which
// receivers/smi and collector register; the catalog tests fail until the
// parser, the receiver factory and a simulated CLI exist for every entry.
//
// Sources are in ../shared/smi-samples/README.md ("Device-selection
// environment variables and slicing knobs") and the vendors' documents named
// next to each entry.
package vendorcatalog
