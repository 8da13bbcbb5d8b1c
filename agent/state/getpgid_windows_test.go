//go:build windows

package state

import "errors"

func syscallGetpgid(int) (int, error) { return 0, errors.ErrUnsupported }
