package controlplane

import (
	"strings"
	"unicode/utf8"
)

// Upper bounds on submitted numbers and strings. They keep quota and
// ledger arithmetic far from overflow (64 devices × MaxMemoryMiB fits an
// int32 many times over) and every stored string well below what either
// store handles, and they make both stores give the same answer: text must
// be valid UTF-8 without NUL bytes, which PostgreSQL refuses and SQLite
// would store.
const (
	MaxMemoryMiB     = 16 << 20 // 16 TiB per device
	MaxCPUMilli      = 4096 * 1000
	MaxHostMemoryMiB = 64 << 20 // 64 TiB
	MaxGangSize      = 4096
	MaxTenantLen     = 128
	MaxProjectLen    = 128
	MaxGangLen       = 253
	MaxImageLen      = 1024
	MaxArgv          = 4096 // command + args entries
	MaxArgvBytes     = 256 << 10
	MaxEnv           = 1024 // env + secret_env entries
	MaxEnvKeyLen     = 256
	MaxEnvBytes      = 256 << 10
	MaxModels        = 64
	MaxModelLen      = 128
	MaxLabelValueLen = 1024
)

// validBounds checks the upper bounds and text rules of s (see above).
func (s *TaskSpec) validBounds() error {
	switch {
	case s.MemoryMiB > MaxMemoryMiB:
		return Invalidf("memory_mib must be at most %d (16 TiB)", MaxMemoryMiB)
	case s.CPUMilli > MaxCPUMilli:
		return Invalidf("cpu_milli must be at most %d", MaxCPUMilli)
	case s.HostMemoryMiB > MaxHostMemoryMiB:
		return Invalidf("host_memory_mib must be at most %d (64 TiB)", MaxHostMemoryMiB)
	case s.GangSize < 0 || s.GangSize > MaxGangSize:
		return Invalidf("gang_size must be between 0 and %d", MaxGangSize)
	case len(s.Tenant) > MaxTenantLen:
		return Invalidf("tenant is longer than %d bytes", MaxTenantLen)
	case len(s.Project) > MaxProjectLen:
		return Invalidf("project is longer than %d bytes", MaxProjectLen)
	case len(s.Gang) > MaxGangLen:
		return Invalidf("gang is longer than %d bytes", MaxGangLen)
	case len(s.Image) > MaxImageLen:
		return Invalidf("image is longer than %d bytes", MaxImageLen)
	case len(s.Command)+len(s.Args) > MaxArgv:
		return Invalidf("command and args have more than %d entries", MaxArgv)
	case len(s.Env)+len(s.SecretEnv) > MaxEnv:
		return Invalidf("env and secret_env have more than %d entries", MaxEnv)
	case len(s.Models) > MaxModels:
		return Invalidf("at most %d models", MaxModels)
	}
	for _, f := range []struct{ name, v string }{{"name", s.Name}, {"image", s.Image}, {"vendor", s.Vendor},
		{"tenant", s.Tenant}, {"project", s.Project}, {"gang", s.Gang}} {
		if err := cleanText(f.name, f.v); err != nil {
			return err
		}
	}
	n := 0
	for _, list := range [][]string{s.Command, s.Args} {
		for _, a := range list {
			n += len(a)
			if err := cleanText("command and args", a); err != nil {
				return err
			}
		}
	}
	if n > MaxArgvBytes {
		return Invalidf("command and args are longer than %d bytes", MaxArgvBytes)
	}
	for _, m := range s.Models {
		if len(m) > MaxModelLen {
			return Invalidf("models entries must be at most %d bytes", MaxModelLen)
		}
		if err := cleanText("models", m); err != nil {
			return err
		}
	}
	n = 0
	for _, e := range []struct {
		name string
		m    map[string]string
	}{{"env", s.Env}, {"secret_env", s.SecretEnv}} {
		for k, v := range e.m {
			n += len(k) + len(v)
			if k == "" || len(k) > MaxEnvKeyLen || strings.ContainsRune(k, '=') {
				return Invalidf("%s names must be 1–%d bytes without '='", e.name, MaxEnvKeyLen)
			}
			if err := cleanText(e.name, k); err != nil {
				return err
			}
			if err := cleanText(e.name, v); err != nil {
				return err
			}
		}
	}
	if n > MaxEnvBytes {
		return Invalidf("env and secret_env are larger than %d bytes", MaxEnvBytes)
	}
	for k, v := range s.Labels {
		if len(v) > MaxLabelValueLen {
			return Invalidf("label values must be at most %d bytes", MaxLabelValueLen)
		}
		if err := cleanText("labels", k); err != nil {
			return err
		}
		if err := cleanText("labels", v); err != nil {
			return err
		}
	}
	return nil
}

// cleanText refuses NUL bytes and invalid UTF-8 in field.
func cleanText(field, v string) error {
	if strings.IndexByte(v, 0) >= 0 {
		return Invalidf("%s must not contain NUL bytes", field)
	}
	if !utf8.ValidString(v) {
		return Invalidf("%s must be valid UTF-8", field)
	}
	return nil
}

// CleanText is cleanText for other packages' fields (users, quotas).
func CleanText(field, v string) error { return cleanText(field, v) }
