package framework

import (
	"fmt"
	"sync"
)

// Code is the outcome of a plugin call (kube-scheduler's status codes).
type Code uint8

const (
	Success Code = iota
	// Unschedulable: the node does not fit now; preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the node can never fit this request
	// (wrong model, no RDMA); preemption must not try it.
	UnschedulableAndUnresolvable
	// Wait: Permit holds the task (gang members still missing).
	Wait
	// Skip: the plugin has nothing to say for this request.
	Skip
	// Error: an internal failure, not a property of the node.
	Error
)

var codeNames = [...]string{"Success", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Error"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", c)
}

// Reason is a registered, constant rejection reason ("insufficient cpu").
// Reasons are small integers so a Status is a plain value: the per-node
// path never allocates, and the memo stores a reason in two bytes.
type Reason uint16

var reasons = struct {
	sync.RWMutex
	text []string
	ids  map[string]Reason
}{text: []string{""}, ids: map[string]Reason{"": 0}}

// NewReason registers (or finds) a reason text. Call it from package-level
// vars: `var reasonCPU = framework.NewReason("insufficient cpu")`.
func NewReason(text string) Reason {
	reasons.Lock()
	defer reasons.Unlock()
	if r, ok := reasons.ids[text]; ok {
		return r
	}
	r := Reason(len(reasons.text))
	reasons.text = append(reasons.text, text)
	reasons.ids[text] = r
	return r
}

// String returns the reason's text.
func (r Reason) String() string {
	reasons.RLock()
	defer reasons.RUnlock()
	if int(r) < len(reasons.text) {
		return reasons.text[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// Status is a plugin's answer. The zero value is Success.
type Status struct {
	Code   Code
	Reason Reason
	Err    error // only with Code Error
}

// OK is the success status.
var OK = Status{}

// Reject returns an Unschedulable status with a reason.
func Reject(r Reason) Status { return Status{Code: Unschedulable, Reason: r} }

// Never returns an UnschedulableAndUnresolvable status with a reason.
func Never(r Reason) Status { return Status{Code: UnschedulableAndUnresolvable, Reason: r} }

// AsError wraps an internal error.
func AsError(err error) Status { return Status{Code: Error, Err: err} }

// IsSuccess reports whether the status is Success (Skip counts as success).
func (s Status) IsSuccess() bool { return s.Code == Success || s.Code == Skip }

func (s Status) String() string {
	switch {
	case s.Err != nil:
		return fmt.Sprintf("%s: %v", s.Code, s.Err)
	case s.Reason != 0:
		return fmt.Sprintf("%s: %s", s.Code, s.Reason)
	}
	return s.Code.String()
}
