package ixsmireceiver

import (
	"testing"

	"github.com/heteroflow/heteroflow/receivers/smi/smitest"
)

func TestGolden(t *testing.T) { smitest.RunGolden(t, Detect, Parse) }

func TestRejectsForeignInput(t *testing.T) { smitest.RejectsForeignInput(t, Parse) }
