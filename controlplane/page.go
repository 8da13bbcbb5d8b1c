package controlplane

// Page selects a window of a list. Limit defaults to DefaultPageLimit and is
// capped at MaxPageLimit by Normalize.
type Page struct {
	Limit  int
	Offset int
}

const (
	DefaultPageLimit = 50
	MaxPageLimit     = 1000
)

// Normalize fills defaults and clamps the window.
func (p Page) Normalize() Page {
	if p.Limit <= 0 {
		p.Limit = DefaultPageLimit
	}
	if p.Limit > MaxPageLimit {
		p.Limit = MaxPageLimit
	}
	if p.Offset < 0 {
		p.Offset = 0
	}
	return p
}
