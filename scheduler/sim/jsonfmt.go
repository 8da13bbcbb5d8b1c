package sim

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/heteroflow/heteroflow/receivers/inventory"
	"github.com/heteroflow/heteroflow/scheduler/model"
)

func isJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '[' || t[0] == '{')
}

// parseJSONNodes reads an array of model.Node; devices without isolation
// capabilities get the capability table's.
func parseJSONNodes(b []byte) ([]model.Node, error) {
	var nodes []model.Node
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&nodes); err != nil {
		return nil, fmt.Errorf("nodes JSON: %w", err)
	}
	for i := range nodes {
		for j := range nodes[i].Devices {
			d := &nodes[i].Devices[j]
			if d.Isolation.Hardware == "" && d.Isolation.DriverLimits == "" && !d.Isolation.Sharing {
				d.Isolation = inventory.IsolationFor(d.Vendor, d.Model)
			}
		}
		if err := nodes[i].Validate(); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// parseJSONTasks reads an array of model.Request (the REST task fields).
func parseJSONTasks(b []byte) ([]model.Request, error) {
	var tasks []model.Request
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tasks); err != nil {
		return nil, fmt.Errorf("tasks JSON: %w", err)
	}
	for i := range tasks {
		if tasks[i].ID == "" {
			tasks[i].ID = fmt.Sprintf("task-%06d", i)
		}
		if err := tasks[i].Normalize(); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}
