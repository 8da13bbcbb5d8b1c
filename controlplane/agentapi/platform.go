package agentapi

import "runtime"

var goos, goarch = runtime.GOOS, runtime.GOARCH
