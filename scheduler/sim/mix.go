package sim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/heteroflow/heteroflow/scheduler/model"
)

// Mix describes a variant of a pod list, made the way the openb family is
// made from its default trace: tasks of one class replace tasks of another,
// drawn from the trace itself, until the class has a stated share of the
// GPU demand. It gives workloads no published figure covers (and no
// profile was tuned on), e.g. fractional-GPU-heavy mixes. Apply is
// deterministic for a given Seed.
type Mix struct {
	// FractionScale multiplies each shared task's compute share (a task
	// asking for less than one whole device), capped at MaxSharedMilli: 1.5
	// turns a 400-milli task into a 600-milli one. 0 or 1 leaves them.
	FractionScale float64
	// SharedShare is the share of GPU demand shared tasks reach, by
	// replacing one-whole-device tasks with the trace's shared tasks (or the
	// reverse when the trace is above it). 0 leaves the share as it is.
	SharedShare float64
	// MultiShare is the share of GPU demand multi-device tasks reach, by
	// replacing one-device tasks with the trace's multi-device tasks (or the
	// reverse). 0 leaves the share as it is.
	MultiShare float64
	// Seed of the replacement draws.
	Seed uint64
}

// MaxSharedMilli caps a scaled fractional task below a whole device, so it
// stays a shared task.
const MaxSharedMilli = 950

// ParseMix reads "scale=1.5,shared=0.8,multi=0.3,seed=7" (any subset, any
// order).
func ParseMix(s string) (Mix, error) {
	var m Mix
	m.Seed = 1
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Mix{}, fmt.Errorf("mix %q: want key=value, got %q", s, kv)
		}
		var err error
		switch k {
		case "scale":
			m.FractionScale, err = strconv.ParseFloat(v, 64)
		case "shared":
			m.SharedShare, err = strconv.ParseFloat(v, 64)
		case "multi":
			m.MultiShare, err = strconv.ParseFloat(v, 64)
		case "seed":
			m.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			return Mix{}, fmt.Errorf("mix %q: unknown key %q (scale, shared, multi, seed)", s, k)
		}
		if err != nil {
			return Mix{}, fmt.Errorf("mix %q: %s: %w", s, k, err)
		}
	}
	return m, m.validate()
}

func (m Mix) validate() error {
	switch {
	case m.FractionScale < 0 || m.FractionScale > 10:
		return fmt.Errorf("mix: scale must be in [0, 10], got %v", m.FractionScale)
	case m.SharedShare < 0 || m.SharedShare >= 1:
		return fmt.Errorf("mix: shared must be in [0, 1), got %v", m.SharedShare)
	case m.MultiShare < 0 || m.MultiShare >= 1:
		return fmt.Errorf("mix: multi must be in [0, 1), got %v", m.MultiShare)
	case m.SharedShare+m.MultiShare >= 1:
		return fmt.Errorf("mix: shared + multi must stay below 1, got %v", m.SharedShare+m.MultiShare)
	}
	return nil
}

// String is the ParseMix form.
func (m Mix) String() string {
	var parts []string
	if m.FractionScale != 0 && m.FractionScale != 1 {
		parts = append(parts, "scale="+strconv.FormatFloat(m.FractionScale, 'g', -1, 64))
	}
	if m.SharedShare != 0 {
		parts = append(parts, "shared="+strconv.FormatFloat(m.SharedShare, 'g', -1, 64))
	}
	if m.MultiShare != 0 {
		parts = append(parts, "multi="+strconv.FormatFloat(m.MultiShare, 'g', -1, 64))
	}
	return strings.Join(append(parts, "seed="+strconv.FormatUint(m.Seed, 10)), ",")
}

func isShared(r *model.Request) bool {
	return r.DeviceCount == 1 && r.ComputeMilli > 0 && r.ComputeMilli < model.WholeMilli
}
func isWholeSingle(r *model.Request) bool {
	return r.DeviceCount == 1 && r.ComputeMilli == model.WholeMilli
}
func isSingle(r *model.Request) bool { return r.DeviceCount == 1 && r.ComputeMilli > 0 }
func isMulti(r *model.Request) bool  { return r.DeviceCount > 1 && r.ComputeMilli > 0 }

// Apply returns the variant of tasks (the input is not changed): first the
// fractions are scaled, then the multi-device share is shifted, then the
// shared share. Task names are kept, so the replay's name order and seeded
// shuffle work on the variant as on a published trace.
func (m Mix) Apply(tasks []model.Request) ([]model.Request, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	out := append([]model.Request(nil), tasks...)
	if m.FractionScale != 0 && m.FractionScale != 1 {
		for i := range out {
			r := &out[i]
			if !isShared(r) {
				continue
			}
			milli := min(MaxSharedMilli, max(1, int32(float64(r.ComputeMilli)*m.FractionScale+0.5)))
			r.ComputeMilli, r.ComputePercent = milli, float64(milli)/10
		}
	}
	rng := rand.New(rand.NewPCG(m.Seed, 0x3157))
	var err error
	if m.MultiShare > 0 {
		if out, err = shiftShare(out, isMulti, isSingle, m.MultiShare, rng); err != nil {
			return nil, fmt.Errorf("mix multi=%v: %w", m.MultiShare, err)
		}
	}
	if m.SharedShare > 0 {
		if out, err = shiftShare(out, isShared, isWholeSingle, m.SharedShare, rng); err != nil {
			return nil, fmt.Errorf("mix shared=%v: %w", m.SharedShare, err)
		}
	}
	return out, nil
}

// shiftShare replaces randomly chosen tasks until the pool class has share
// of the GPU demand: below it, "other" tasks become copies of random pool
// tasks; above it, pool tasks become copies of random other tasks. The
// replacement keeps the replaced task's name.
func shiftShare(out []model.Request, pool, other func(*model.Request) bool, share float64, rng *rand.Rand) ([]model.Request, error) {
	var total, inPool int64
	var pools, others []model.Request
	for i := range out {
		total += demand(&out[i])
		switch {
		case pool(&out[i]):
			pools = append(pools, out[i])
			inPool += demand(&out[i])
		case other(&out[i]):
			others = append(others, out[i])
		}
	}
	grow := float64(inPool) < share*float64(total)
	from, victim := pools, other
	if !grow {
		from, victim = others, pool
	}
	if len(from) == 0 {
		return nil, fmt.Errorf("the trace has no task to draw from")
	}
	victims := 0
	for i := range out {
		if victim(&out[i]) {
			victims++
		}
	}
	for grow == (float64(inPool) < share*float64(total)) {
		if victims == 0 {
			return nil, fmt.Errorf("ran out of tasks to replace at %.1f%% of demand", 100*float64(inPool)/float64(total))
		}
		i := rng.IntN(len(out))
		if !victim(&out[i]) {
			continue
		}
		t := from[rng.IntN(len(from))]
		t.ID = out[i].ID
		total += demand(&t) - demand(&out[i])
		if grow {
			inPool += demand(&t)
		} else {
			inPool -= demand(&out[i])
		}
		victims--
		out[i] = t
	}
	return out, nil
}

// Shares reports the shared and multi-device shares of GPU demand (what a
// Mix moves), for reports and tests.
func Shares(tasks []model.Request) (shared, multi float64) {
	var total, sh, mu int64
	for i := range tasks {
		d := demand(&tasks[i])
		total += d
		if isShared(&tasks[i]) {
			sh += d
		}
		if isMulti(&tasks[i]) {
			mu += d
		}
	}
	if total == 0 {
		return 0, 0
	}
	return float64(sh) / float64(total), float64(mu) / float64(total)
}
