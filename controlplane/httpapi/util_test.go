package httpapi

import (
	"net/url"
	"strconv"
)

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func urlQuery(s string) string { return url.QueryEscape(s) }
