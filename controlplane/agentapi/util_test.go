package agentapi

import "strconv"

func strconvI(i int64) string { return strconv.FormatInt(i, 10) }
