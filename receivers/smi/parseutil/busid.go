package parseutil

import (
	"fmt"
	"strconv"
	"strings"
)

// BusID normalises a PCI address to "dddd:bb:dd.f" with a 4-hex-digit,
// lower-case domain. nvidia-smi prints an 8-digit domain
// ("00000000:00:04.0"), some tools print none ("3b:00.0"), some upper case.
// Anything that is not a PCI address gives nil.
func BusID(s string) *string {
	s = strings.ToLower(strings.TrimSpace(s))
	if IsUnknown(s) {
		return nil
	}
	parts := strings.Split(s, ":")
	var dom, bus, devfn string
	switch len(parts) {
	case 2:
		dom, bus, devfn = "0", parts[0], parts[1]
	case 3:
		dom, bus, devfn = parts[0], parts[1], parts[2]
	default:
		return nil
	}
	dev, fn, ok := strings.Cut(devfn, ".")
	if !ok {
		return nil
	}
	d, err1 := strconv.ParseUint(dom, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 8)
	f, err4 := strconv.ParseUint(fn, 16, 8)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || d > 0xffff || v > 0x1f || f > 7 {
		return nil
	}
	out := fmt.Sprintf("%04x:%02x:%02x.%x", d, b, v, f)
	return &out
}
