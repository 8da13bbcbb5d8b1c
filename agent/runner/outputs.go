package runner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/heteroflow/heteroflow/agent/protocol"
)

// OutputsFile is the file in a task's directory that protocol.OutputsEnv
// names: the task writes its result values there, one KEY=VALUE per line.
const OutputsFile = "outputs"

// ReadOutputs reads the result values a task wrote in its directory (nil
// when it wrote none). Blank lines and lines starting with # are skipped;
// a later KEY replaces an earlier one. A file over protocol's limits, or a
// line without "=", is an error and nothing is reported.
func ReadOutputs(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, OutputsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) > protocol.MaxOutputsBytes {
		return nil, fmt.Errorf("outputs file is %d bytes, over %d", len(b), protocol.MaxOutputsBytes)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), protocol.MaxOutputsBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			return nil, fmt.Errorf("outputs line %d is not KEY=VALUE", n)
		case len(v) > protocol.MaxOutputValue:
			return nil, fmt.Errorf("output %s is longer than %d bytes", k, protocol.MaxOutputValue)
		}
		out[k] = v
		if len(out) > protocol.MaxOutputs {
			return nil, fmt.Errorf("more than %d outputs", protocol.MaxOutputs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
