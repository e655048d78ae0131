package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEmptyShard: a part of a suite that holds no case (more parts than
// cases) says so, in place of the verdict, in the JUnit XML (a suite of
// no test, with why in its system-out) and on the report's page, and
// exits 0: the other parts run every case. Before, it printed "PASS 0
// cases".
func TestEmptyShard(t *testing.T) {
	dir := t.TempDir()
	suite := writeCISuite(t, dir, "")
	junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report")
	r := runHilrig(t, "test", suite, "--shard", "10/12", "--junit", junit, "--report", report)
	const why = "part 10/12 holds none of the suite's 9 cases: 12 parts of 9 cases leave parts 10 to 12 empty (each case runs once, in one part)"
	if r.code != 0 || !strings.Contains(r.stdout, "NO CASES: "+why+"\n") || strings.Contains(r.stdout, "PASS") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	xml, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(xml), `tests="0"`) || !strings.Contains(string(xml), "<system-out><![CDATA["+why) {
		t.Errorf("the JUnit XML does not say the part is empty:\n%s", xml)
	}
	validateJUnit(t, junit)
	page, err := os.ReadFile(filepath.Join(report, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), strings.ReplaceAll(why, "'", "&#39;")) {
		t.Errorf("the report does not say the part is empty")
	}
}

// fuzzTargets are the module's fuzz targets (func FuzzXxx(*testing.F) in
// the test files of the packages go list finds), by package directory as
// go test takes it ("./firmware/wire"), each package's sorted.
func fuzzTargets(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}\t{{join .TestGoFiles \"\\t\"}}\t{{join .XTestGoFiles \"\\t\"}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string][]string{}
	fset := token.NewFileSet()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		rel, err := filepath.Rel(root, fields[0])
		if err != nil {
			t.Fatal(err)
		}
		pkg := "./" + filepath.ToSlash(rel)
		for _, name := range fields[1:] {
			if name == "" {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(fields[0], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && takesTestingF(fn) {
					targets[pkg] = append(targets[pkg], fn.Name.Name)
				}
			}
		}
		slices.Sort(targets[pkg])
	}
	return targets
}

// takesTestingF reports whether fn's one parameter is a *testing.F.
func takesTestingF(fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && sel.Sel.Name == "F"
}

// TestReadmeFuzzTargets: README.md's list of fuzz targets is the code's,
// package by package (go generate ./rig/cmd/hilrig writes it), and every
// go test -fuzz command the README gives fuzzes exactly one target of a
// package that has it. Before, the README's command named a package
// without the target (go test ./drivers -fuzz FuzzCOBS: "ok", nothing
// fuzzed) and a package that does not exist (rig/plant).
func TestReadmeFuzzTargets(t *testing.T) {
	targets := fuzzTargets(t)
	if len(targets) < 10 {
		t.Fatalf("fuzz targets found in %d packages: %v", len(targets), targets)
	}
	pkgs := slices.Sorted(maps.Keys(targets))
	var b strings.Builder
	b.WriteString("| package | fuzz targets |\n|---|---|\n")
	for _, pkg := range pkgs {
		fmt.Fprintf(&b, "| `%s` | `%s` |\n", pkg, strings.Join(targets[pkg], "`, `"))
	}
	readmeBlock(t, "fuzz", "list of fuzz targets", "the code", b.String())

	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	commands := regexp.MustCompile("go test (\\./\\S+)[^`\\n]* -fuzz '?([^'\\s`]+)'?").FindAllStringSubmatch(string(data), -1)
	if len(commands) == 0 {
		t.Fatal("README.md gives no go test -fuzz command")
	}
	for _, c := range commands {
		pkg, re := c[1], regexp.MustCompile(c[2])
		var matched []string
		for _, target := range targets[pkg] {
			if re.MatchString(target) {
				matched = append(matched, target)
			}
		}
		if len(matched) != 1 {
			t.Errorf("README.md: %q fuzzes %d targets of %s (%v), want one (the package's: %v)", c[0], len(matched), pkg, matched, targets[pkg])
		}
	}
}

// TestReadmePathsExist: every path of the repository README.md names (a
// package, a file, a folder: a word that starts with one of the top-level
// folders, as in `rig/record/pcapng.go`, ./drivers or a link's target)
// exists.
func TestReadmePathsExist(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	repoPath := regexp.MustCompile(`^(\./)?(emulator|firmware|drivers|profiles|rig|tests)(/[A-Za-z0-9_.-]+)*/?$`)
	checked := 0
	for n, line := range strings.Split(string(data), "\n") {
		for _, word := range regexp.MustCompile(`[A-Za-z0-9_./#-]+`).FindAllString(line, -1) {
			word, _, _ = strings.Cut(word, "#") // a link's anchor
			word = strings.TrimRight(word, ".") // a sentence's end
			if !repoPath.MatchString(word) || !strings.Contains(strings.TrimPrefix(word, "./"), "/") && !strings.HasPrefix(word, "./") {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join("..", word)); err != nil {
				t.Errorf("README.md:%d names %s, which does not exist", n+1, word)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d paths found in README.md", checked)
	}
}
