package tests

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection keeps ../shared/DESIGN.md's import direction true:
// emulator and firmware depend on nothing else of ours (firmware/wire on
// nothing at all), drivers only on firmware, profiles on emulator and
// firmware, and only rig (and these tests) on everything. So no top-level
// folder imports another both ways, and nothing below rig imports rig.
func TestImportDirection(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/hilrig/hilrig/"
	allowed := map[string][]string{
		"emulator": {"emulator"},
		"firmware": {"firmware"},
		"drivers":  {"drivers", "firmware"},
		"profiles": {"profiles", "emulator", "firmware"},
		"rig":      {"rig", "emulator", "firmware", "drivers", "profiles"},
		"tests":    {"tests", "rig", "emulator", "firmware", "drivers", "profiles"},
	}
	// The profile languages apart (issue 20): the YAML machinery imports no
	// language; each language imports the machinery and the languages its
	// files name (a bench names a profile and model files, a suite profiles
	// and benches).
	languages := map[string][]string{
		"profiles/lang":      nil,
		"profiles":           {"profiles/lang"},
		"profiles/modelfile": {"profiles/lang"},
		"profiles/benchfile": {"profiles/lang", "profiles", "profiles/modelfile"},
		"profiles/suitefile": {"profiles/lang", "profiles", "profiles/benchfile"},
	}
	seen := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	packages := 0
	for {
		var pkg struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&pkg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		packages++
		from := strings.SplitN(strings.TrimPrefix(pkg.ImportPath, module), "/", 2)[0]
		ok, known := allowed[from]
		if !known {
			t.Errorf("%s is outside the fixed top level (rig, emulator, drivers, firmware, profiles, tests)", pkg.ImportPath)
			continue
		}
		self := strings.TrimPrefix(pkg.ImportPath, module)
		names, isLanguage := languages[self]
		if from == "profiles" && !isLanguage {
			t.Errorf("%s is not one of the profile languages' packages %v: say in this test what it may import", pkg.ImportPath, slices.Sorted(maps.Keys(languages)))
		}
		seen[self] = true
		for _, imp := range pkg.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			rel := strings.TrimPrefix(imp, module)
			if isLanguage && strings.SplitN(rel, "/", 2)[0] == "profiles" && !slices.Contains(names, rel) {
				t.Errorf("%s imports %s: it may import of the languages only %v", pkg.ImportPath, imp, names)
			}
			to := strings.SplitN(rel, "/", 2)[0]
			if !slices.Contains(ok, to) {
				t.Errorf("%s imports %s: %s may import only %v", pkg.ImportPath, imp, from, ok)
			}
			if pkg.ImportPath == module+"firmware/wire" {
				t.Errorf("firmware/wire imports %s; it must depend on nothing of ours, so that device code can use it", imp)
			}
			if strings.HasPrefix(pkg.ImportPath, module+"rig/executor") && to == "profiles" {
				t.Errorf("%s imports %s: the executor runs in its own terms (executor.ModelSpec, Stepping), which the rig makes of the languages' (rig.ModelSpecOf)", pkg.ImportPath, imp)
			}
		}
	}
	if packages < 10 {
		t.Fatalf("go list found only %d packages", packages)
	}
	for lang := range languages {
		if !seen[lang] {
			t.Errorf("no package %s: the profile languages are apart, the machinery in profiles/lang", lang)
		}
	}
}
