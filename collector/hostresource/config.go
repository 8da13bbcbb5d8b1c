package hostresource

import "fmt"

// Config of the host_resource processor.
type Config struct {
	// Override replaces attributes the resource already has (default false:
	// a value set upstream, e.g. by an agent that knows its node name, wins).
	Override bool `mapstructure:"override"`
	// HostName replaces os.Hostname() (containers often see a random one).
	HostName string `mapstructure:"host_name"`
	// MachineIDPath is read for host.id; empty: /etc/machine-id.
	MachineIDPath string `mapstructure:"machine_id_path"`
}

// DefaultMachineIDPath is systemd's machine id, stable across reboots.
const DefaultMachineIDPath = "/etc/machine-id"

// Validate rejects a host name with whitespace (it ends up in a label).
func (c *Config) Validate() error {
	for _, r := range c.HostName {
		if r == ' ' || r == '\t' || r == '\n' {
			return fmt.Errorf("host_name %q contains whitespace", c.HostName)
		}
	}
	return nil
}
