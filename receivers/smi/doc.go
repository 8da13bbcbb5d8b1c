// Package smi orchestrates the vendor management CLIs: for each vendor it
// knows the tool names to try (xpu-smi and xpu_smi, hy-smi and
// /opt/hyhal/bin/hy-smi, …), the commands that make one full snapshot, how
// to detect an output's form, and which parser reads it.
//
// Collect runs those commands through an injected Runner, so tests and the
// simulated CLIs (receivers/fakesmi) feed canned output and production code
// runs the real binaries (ExecRunner). A missing tool is ErrToolNotFound, a
// tool that cannot reach its driver is ErrDriverNotLoaded; problems with one
// device or one secondary command become Snapshot.Warnings.
package smi
