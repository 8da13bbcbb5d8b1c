package storeutil

import (
	"encoding/json"
	"fmt"

	"github.com/heteroflow/heteroflow/controlplane"
)

// SpecJSON is the JSON-encoded form of a TaskSpec's list and map fields, one
// string per column. Empty values are stored as "[]" / "{}" (never NULL) so
// that JSON operators in SQL always see a container.
type SpecJSON struct {
	Command, Args, Env, Models, Labels string
	SecretEnv                          string
}

// EncodeSpec encodes the JSON columns of s.
func EncodeSpec(s *controlplane.TaskSpec) (SpecJSON, error) {
	var out SpecJSON
	var err error
	if out.Command, err = encodeList(s.Command); err != nil {
		return out, fmt.Errorf("encode command: %w", err)
	}
	if out.Args, err = encodeList(s.Args); err != nil {
		return out, fmt.Errorf("encode args: %w", err)
	}
	if out.Models, err = encodeList(s.Models); err != nil {
		return out, fmt.Errorf("encode models: %w", err)
	}
	if out.Env, err = encodeMap(s.Env); err != nil {
		return out, fmt.Errorf("encode env: %w", err)
	}
	if out.Labels, err = encodeMap(s.Labels); err != nil {
		return out, fmt.Errorf("encode labels: %w", err)
	}
	if out.SecretEnv, err = encodeMap(s.SecretEnv); err != nil {
		return out, fmt.Errorf("encode secret_env: %w", err)
	}
	return out, nil
}

// DecodeSpec fills s's JSON fields from stored column values. Empty
// containers decode to nil so that a round trip preserves nil inputs.
func DecodeSpec(s *controlplane.TaskSpec, command, args, env, models, labels []byte) error {
	if err := decodeList(command, &s.Command); err != nil {
		return fmt.Errorf("decode command: %w", err)
	}
	if err := decodeList(args, &s.Args); err != nil {
		return fmt.Errorf("decode args: %w", err)
	}
	if err := decodeList(models, &s.Models); err != nil {
		return fmt.Errorf("decode models: %w", err)
	}
	if err := decodeMap(env, &s.Env); err != nil {
		return fmt.Errorf("decode env: %w", err)
	}
	if err := decodeMap(labels, &s.Labels); err != nil {
		return fmt.Errorf("decode labels: %w", err)
	}
	return nil
}

// DecodeSecretEnv fills s.SecretEnv from its stored column value.
func DecodeSecretEnv(s *controlplane.TaskSpec, secretEnv []byte) error {
	if err := decodeMap(secretEnv, &s.SecretEnv); err != nil {
		return fmt.Errorf("decode secret_env: %w", err)
	}
	return nil
}

// LabelsJSON encodes a label filter as a JSON object (PostgreSQL @>).
func LabelsJSON(m map[string]string) (string, error) { return encodeMap(m) }

func encodeList(v []string) (string, error) {
	if len(v) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func encodeMap(m map[string]string) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func decodeList(b []byte, dst *[]string) error {
	var v []string
	if len(b) > 0 {
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
	}
	if len(v) == 0 {
		v = nil
	}
	*dst = v
	return nil
}

func decodeMap(b []byte, dst *map[string]string) error {
	var m map[string]string
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
	}
	if len(m) == 0 {
		m = nil
	}
	*dst = m
	return nil
}
