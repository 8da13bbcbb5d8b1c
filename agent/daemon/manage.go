package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heteroflow/heteroflow/agent/protocol"
	"github.com/heteroflow/heteroflow/agent/runner"
)

// managedConfig is the part of the agent configuration the server may push.
type managedConfig struct {
	HeartbeatInterval string            `json:"heartbeat_interval,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
}

// manage answers a remote-management command through the outbox.
func (a *Agent) manage(ctx context.Context, id int64, m protocol.Management) {
	res := &protocol.ManagementResult{ID: id, OK: true}
	var out any
	var err error
	switch m.Command {
	case protocol.ManageStatus:
		out = a.statusReport()
	case protocol.ManageLogs:
		out, err = a.ownLogTail()
	case protocol.ManageConfig:
		out, err = a.applyConfig(m.Config)
	default:
		err = fmt.Errorf("unknown management command %q", m.Command)
	}
	if err != nil {
		res.OK, res.Error = false, err.Error()
	} else if b, merr := json.Marshal(out); merr == nil {
		res.Output = b
	}
	a.appendStatus(protocol.StatusUpdate{AssignmentID: id, Phase: protocol.PhaseManaged, Result: res})
}

func (a *Agent) statusReport() map[string]any {
	return map[string]any{
		"node_id": a.creds.NodeID, "version": a.cfg.Version, "uptime_seconds": int(time.Since(a.started).Seconds()),
		"running": a.running(), "outbox_pending": a.out.Len(), "outbox_acked": a.out.Acked(),
		"vendors": vendorsOf(a.inv), "heartbeat_interval": a.cfg.Heartbeat.String(), "labels": a.cfg.Labels,
	}
}

// applyConfig validates and applies a pushed config. The heartbeat period
// takes effect at the next restart of the loop; it is recorded now.
func (a *Agent) applyConfig(raw json.RawMessage) (any, error) {
	var c managedConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if c.HeartbeatInterval != "" {
		d, err := time.ParseDuration(c.HeartbeatInterval)
		if err != nil || d < time.Second {
			return nil, fmt.Errorf("heartbeat_interval must be a duration ≥ 1s")
		}
		a.mu.Lock()
		a.cfg.Heartbeat = d
		a.mu.Unlock()
	}
	if c.Labels != nil {
		a.mu.Lock()
		a.cfg.Labels = c.Labels
		a.mu.Unlock()
	}
	return map[string]any{"applied": c}, nil
}

// logTailBytes is how much of its own log the agent returns on request.
const logTailBytes = 64 << 10

func (a *Agent) ownLogTail() (any, error) {
	if a.cfg.AgentLog == nil {
		return nil, fmt.Errorf("this agent does not keep a log file")
	}
	size := a.cfg.AgentLog.Size()
	data, start, _, err := runner.ReadLog(a.cfg.AgentLogDir, "agent", max(0, size-logTailBytes), logTailBytes)
	if err != nil {
		return nil, err
	}
	return map[string]any{"offset": start, "size": size, "log": string(data)}, nil
}
