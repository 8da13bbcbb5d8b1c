package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heteroflow/heteroflow/controlplane/apitypes"
)

// task get shows everything that runs: for a container task the image on
// its own line and then the command and args it is started with (the
// command used to vanish when an image was set).
func TestTaskDetailShowsImageCommandAndArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		spec       apitypes.TaskSpecJSON
		image, cmd string
	}{
		{"command only", apitypes.TaskSpecJSON{Command: []string{"sh", "-c", "echo hi"}}, "", `sh -c 'echo hi'`},
		{"image with args", apitypes.TaskSpecJSON{Image: "reg/infer:1", Args: []string{"--port=8080"}}, "reg/infer:1", "--port=8080"},
		{"image with command", apitypes.TaskSpecJSON{Image: "reg/train:1", Command: []string{"python", "train.py"}, Args: []string{"--epochs", "3"}},
			"reg/train:1", "python train.py --epochs 3"},
		{"image alone", apitypes.TaskSpecJSON{Image: "reg/svc:1"}, "reg/svc:1", "—"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printTaskDetail(&out, &apitypes.TaskJSON{TaskSpecJSON: tc.spec}, nil)
			if tc.image == "" {
				require.NotContains(t, out.String(), "image / 镜像")
			} else {
				require.Regexp(t, `(?m)^image / 镜像\s+`+regexpQuote(tc.image)+`$`, out.String())
			}
			require.Regexp(t, `(?m)^command / 命令\s+`+regexpQuote(tc.cmd)+`$`, out.String())
		})
	}
}

func regexpQuote(s string) string { return regexp.QuoteMeta(s) }
