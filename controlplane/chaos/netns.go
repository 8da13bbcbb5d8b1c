package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// netnsSet is the network namespaces the harness creates for real agents:
// namespace i is joined to the host by a veth pair, host side 10.251.i.1/30,
// namespace side 10.251.i.2/30. Only these addresses and links are touched,
// and remove deletes them all.
type netnsSet struct {
	names     []string
	hostLinks []string
	hostIPs   []string
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func newNetns(n int) (*netnsSet, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("network namespaces need the ip command (iproute2): %w", err)
	}
	s := &netnsSet{}
	tag := os.Getpid() % 10000
	for i := range n {
		ns := fmt.Sprintf("hfchaos%d-%d", tag, i)
		host, peer := fmt.Sprintf("hfc%dh%d", tag, i), fmt.Sprintf("hfc%dn%d", tag, i)
		hostIP, nsIP := fmt.Sprintf("10.251.%d.1", i), fmt.Sprintf("10.251.%d.2", i)
		steps := [][]string{
			{"netns", "add", ns},
			{"link", "add", host, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", ns},
			{"addr", "add", hostIP + "/30", "dev", host},
			{"link", "set", host, "up"},
			{"-n", ns, "addr", "add", nsIP + "/30", "dev", peer},
			{"-n", ns, "link", "set", peer, "up"},
			{"-n", ns, "link", "set", "lo", "up"},
		}
		s.names = append(s.names, ns)
		s.hostLinks = append(s.hostLinks, host)
		s.hostIPs = append(s.hostIPs, hostIP)
		for _, st := range steps {
			if err := ipCmd(st...); err != nil {
				s.remove()
				return nil, err
			}
		}
	}
	return s, nil
}

// remove deletes the namespaces (their veth ends go with them, and with
// them the host ends).
func (s *netnsSet) remove() {
	for i, ns := range s.names {
		_ = ipCmd("link", "del", s.hostLinks[i])
		_ = ipCmd("netns", "del", ns)
	}
}
