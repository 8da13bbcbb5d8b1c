package storeutil

import (
	"encoding/json"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

// SelectorJSON encodes a tenant's node selector ({} when empty).
func SelectorJSON(sel map[string]string) (string, error) {
	if len(sel) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(sel)
	if err != nil {
		return "", fmt.Errorf("node selector: %w", err)
	}
	return string(b), nil
}

// DecodeSelector reads a stored node selector; {} decodes to nil.
func DecodeSelector(b []byte) (map[string]string, error) {
	var m map[string]string
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("node selector: %w", err)
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// ApplyTenantUpdate copies the set fields of upd onto t and validates it.
func ApplyTenantUpdate(t *controlplane.Tenant, upd controlplane.TenantUpdate) error {
	if upd.DisplayName != nil {
		t.DisplayName = *upd.DisplayName
	}
	if upd.Disabled != nil {
		t.Disabled = *upd.Disabled
	}
	if upd.NodeSelector != nil {
		t.NodeSelector = *upd.NodeSelector
		if len(t.NodeSelector) == 0 {
			t.NodeSelector = nil
		}
	}
	return t.Validate()
}

// ApplyProjectUpdate copies the set fields of upd onto p and validates it.
func ApplyProjectUpdate(p *controlplane.Project, upd controlplane.ProjectUpdate) error {
	if upd.DisplayName != nil {
		p.DisplayName = *upd.DisplayName
	}
	if upd.Disabled != nil {
		p.Disabled = *upd.Disabled
	}
	return p.Validate()
}
