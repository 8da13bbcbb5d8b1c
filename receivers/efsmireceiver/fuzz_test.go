package efsmireceiver

import (
	"os"
	"path/filepath"
	"testing"

	pu "github.com/heteroflow/heteroflow/receivers/smi/parseutil"
)

// FuzzParse feeds arbitrary bytes to the auto-detecting parser and to every
// form's parser: none may panic or hang, and a nil error always comes with
// a snapshot.
func FuzzParseEfsmi(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > pu.MaxInput {
			return
		}
		if snap, err := Parse(data); err == nil && snap == nil {
			t.Fatal("Parse: nil snapshot without error")
		}
		for _, form := range Forms {
			if snap, err := ParseForm(form, data); err == nil && snap == nil {
				t.Fatalf("ParseForm(%s): nil snapshot without error", form)
			}
		}
	})
}
