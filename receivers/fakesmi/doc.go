// Package fakesmi simulates the vendor management CLIs for tests and
// `make run`: given a node profile (vendor, model, device count, memory,
// partitions) and a state file (per-device utilisation and memory, live
// partitions), it prints what the real tool prints for every form the
// parsers accept, and it performs the isolation commands the agent issues
// (nvidia-smi mig -cgi/-dgi, npu-smi set -t create-vnpu/destroy-vnpu) by
// updating the state file. Every invocation is appended to a log so tests
// can assert which vendor commands were run.
//
// No production code path depends on this package.
package fakesmi
