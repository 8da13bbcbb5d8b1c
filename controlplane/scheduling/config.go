package scheduling

import (
	"bytes"
	_ "embed"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/scheduler/framework"
)

//go:embed profile.yaml
var defaultProfile []byte

// DefaultProfile is the live cluster's plugin profile (profile.yaml).
func DefaultProfile() framework.Profile {
	p, err := framework.LoadProfile(bytes.NewReader(defaultProfile))
	if err != nil {
		panic(fmt.Sprintf("scheduling: embedded profile: %v", err)) // programming error
	}
	return p
}

// Config tunes the loop. Zero values take the defaults of Defaults().
type Config struct {
	// Tick is how often the leader runs the loop.
	Tick time.Duration
	// NodeSync is how often nodes are re-read from the store.
	NodeSync time.Duration
	// LeaseTTL is how long a leader's lease lasts without renewal.
	LeaseTTL time.Duration
	// BackoffBase/BackoffMax bound the exponential backoff of tasks that
	// fit nowhere and of retries.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// QueueTimeout fails a task queued longer (0 = never).
	QueueTimeout time.Duration
	// StartTimeout requeues a scheduled task its agent has not started.
	StartTimeout time.Duration
	// LostGrace is how long a running task may be missing from its
	// agent's heartbeats, or its node offline, before it is failed.
	LostGrace time.Duration
	// DrainTimeout frees a preempted run's capacity even when its agent
	// never confirmed the stop.
	DrainTimeout time.Duration
	// BronzeOvercommit is the memory overcommit ratio of Bronze slices.
	BronzeOvercommit float64
	// AllowDefrag lets POST /scheduler/defrag execute moves, and the
	// leader run Defrag's policy.
	AllowDefrag bool
	// Defrag is the automatic defragmentation policy (defrag_policy.go).
	Defrag  DefragPolicy
	Profile framework.Profile
}

// Defaults returns the defaults.
func Defaults() Config {
	return Config{Tick: 100 * time.Millisecond, NodeSync: time.Second, LeaseTTL: 15 * time.Second,
		BackoffBase: time.Second, BackoffMax: 30 * time.Second, QueueTimeout: 24 * time.Hour,
		StartTimeout: 2 * time.Minute, LostGrace: time.Minute, DrainTimeout: 30 * time.Second,
		BronzeOvercommit: 1, Profile: DefaultProfile()}
}

func (c *Config) fill() error {
	d := Defaults()
	set := func(v *time.Duration, def time.Duration) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&c.Tick, d.Tick)
	set(&c.NodeSync, d.NodeSync)
	set(&c.LeaseTTL, d.LeaseTTL)
	set(&c.BackoffBase, d.BackoffBase)
	set(&c.BackoffMax, d.BackoffMax)
	set(&c.StartTimeout, d.StartTimeout)
	set(&c.LostGrace, d.LostGrace)
	set(&c.DrainTimeout, d.DrainTimeout)
	if c.QueueTimeout < 0 {
		c.QueueTimeout = 0
	}
	if c.BronzeOvercommit == 0 {
		c.BronzeOvercommit = d.BronzeOvercommit
	}
	if c.Profile.Name == "" {
		c.Profile = d.Profile
	}
	if err := c.Defrag.validate(); err != nil {
		return err
	}
	if c.BackoffMax < c.BackoffBase {
		return fmt.Errorf("scheduling: backoff max %v is below base %v", c.BackoffMax, c.BackoffBase)
	}
	return c.Profile.Validate()
}

// backoff is base·2^(n−1), capped.
func (c *Config) backoff(n int) time.Duration {
	d := c.BackoffBase
	for i := 1; i < n && d < c.BackoffMax; i++ {
		d *= 2
	}
	return min(d, c.BackoffMax)
}
