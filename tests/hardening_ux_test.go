package tests

import (
	"bytes"
	"encoding/json"
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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/sys/unix"
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

// terminal is a program running on a pseudo-terminal of its own, as in a
// terminal emulator: the terminal is its standard input, output and
// error and its controlling terminal, and the test is the emulator,
// typing and reading what the terminal shows.
type terminal struct {
	t      *testing.T
	master *os.File
	cmd    *exec.Cmd
	mu     sync.Mutex
	shown  bytes.Buffer
	closed chan struct{} // the reader has stopped: no process has the terminal open
	exited chan struct{} // the program has exited (cmd.Wait returned)
}

// startInTerminal starts cmd on a new terminal cols columns wide.
func startInTerminal(t *testing.T, cmd *exec.Cmd, cols uint16) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: cols}); err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true} // the terminal is its stdin, descriptor 0
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &terminal{t: t, master: master, cmd: cmd, closed: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(term.exited)
	}()
	go func() {
		defer close(term.closed)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.shown.Write(buf[:n])
			term.mu.Unlock()
			if err != nil { // EIO: the last process that had it open has closed it
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-term.exited
		master.Close()
	})
	return term
}

// Shown is what the terminal has shown so far.
func (term *terminal) Shown() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.shown.String()
}

// Type types s.
func (term *terminal) Type(s string) {
	term.t.Helper()
	if _, err := term.master.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// WaitFor waits until the terminal has shown want after the first from
// bytes, and returns where it ends; it fails the test after timeout.
func (term *terminal) WaitFor(from int, want string, timeout time.Duration) int {
	term.t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		shown := term.Shown()
		if i := strings.Index(shown[min(from, len(shown)):], want); i >= 0 {
			return min(from, len(shown)) + i + len(want)
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("after %v the terminal has not shown %q; it shows:\n%q", timeout, want, shown[min(from, len(shown)):])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Wait waits for the program to exit, and for what it wrote to reach the
// test, and returns what the terminal showed and its exit code.
func (term *terminal) Wait(timeout time.Duration) (string, int) {
	term.t.Helper()
	select {
	case <-term.exited:
	case <-time.After(timeout):
		term.t.Fatalf("still running after %v; the terminal shows:\n%s", timeout, term.Shown())
	}
	select {
	case <-term.closed:
	case <-time.After(5 * time.Second):
		term.t.Fatalf("the terminal is still open 5 s after the program exited")
	}
	return term.Shown(), term.cmd.ProcessState.ExitCode()
}

// TestRunSummaryForAPerson: at the end of hilrig run on a terminal a
// person reads the summary in words (the flows' figures, the endpoints,
// the executor's timing, where the files are), and the status line
// above it is redrawn in place; the JSON goes to stdout with --json, or
// when stdout is not a terminal (a pipe: what CI parses, as before), and
// to --summary FILE, which leaves stdout the words. Before, a run on a
// terminal ended in some 200 lines of JSON, and its status line was
// written as plain lines (hilrig's stdout and stderr, wrapped to catch a
// reader gone, no longer looked like a terminal).
func TestRunSummaryForAPerson(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "bench.yaml")
	text := strings.ReplaceAll(`name: person
endpoints:
  controller: {pty: {link: DIR/controller, framing: line}}
  plant:      {pty: {link: DIR/plant, framing: line}}
bind:
  to-plant:      {from: controller, to: plant}
  to-controller: {from: plant, to: controller}
`, "DIR", dir)
	if err := os.WriteFile(bench, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.csv")
	term := startInTerminal(t, exec.Command(hilrig, "run", "--bench", bench, "bottleneck", "--duration", "1s", "--priority", "0", "--trace", trace), 160)
	shown, code := term.Wait(30 * time.Second)
	shown = strings.ReplaceAll(shown, "\r\n", "\n")
	for _, want := range []string{"\x1b[K", "\nnetwork bottleneck on bench person, real time, 1s, seed 1; stopped: duration\n",
		"\n  m2s    0 sent  0 arrived  0 lost  0 in flight\n", "\nendpoint controller (pseudo-terminal): 0 frames in, 0 out, 0 bad\n",
		"\nexecutor: ", "\nfiles:\n  trace  " + trace + "  0 rows\n"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q", want)
		}
	}
	if code != 0 || strings.Contains(shown, `"flows"`) {
		t.Errorf("exit %d; the terminal shows:\n%s", code, shown)
	}

	// The same code ends hilrig sim: JSON with --json on a terminal, on a
	// pipe, and in --summary's file (which leaves a pipe nothing, as
	// before; a terminal has the words).
	term = startInTerminal(t, exec.Command(hilrig, "sim", "bottleneck", "--duration", "2s", "--json"), 160)
	shown, code = term.Wait(30 * time.Second)
	if code != 0 || !strings.Contains(shown, `"profile": "bottleneck",`) || strings.Contains(shown, "network bottleneck") {
		t.Errorf("sim --json on a terminal: exit %d:\n%s", code, shown)
	}
	var s struct{ Profile, Clock string }
	r := runHilrig(t, "sim", "bottleneck", "--duration", "2s")
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 || s.Clock != "virtual" {
		t.Errorf("sim on a pipe: exit %d, %v:\n%s", r.code, err, r.stdout)
	}
	file := filepath.Join(dir, "summary.json")
	r = runHilrig(t, "sim", "bottleneck", "--duration", "2s", "--summary", file)
	data, err := os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil || r.code != 0 || r.stdout != "" {
		t.Errorf("sim --summary FILE on a pipe: exit %d, %v; stdout:\n%s", r.code, err, r.stdout)
	}
	os.Remove(file)
	term = startInTerminal(t, exec.Command(hilrig, "sim", "bottleneck", "--duration", "2s", "--summary", file), 160)
	shown, code = term.Wait(30 * time.Second)
	data, err = os.ReadFile(file)
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if shown = strings.ReplaceAll(shown, "\r\n", "\n"); err != nil || code != 0 || !strings.HasPrefix(shown, "\nnetwork bottleneck, virtual time, 2s, seed 1; stopped: duration\n") || !strings.Contains(shown, "\n  summary  "+file+"\n") {
		t.Errorf("sim --summary FILE on a terminal: exit %d, %v; the terminal shows:\n%s", code, err, shown)
	}
}

// TestBashCompletionInABash completes in a real interactive bash on a
// terminal, as a person does, pressing Tab: with the bash-completion
// package loaded the script completes commands' arguments, flags' values
// and files; without it, a Tab says what is missing. Before, without the
// package every Tab printed "_get_comp_words_by_ref: command not found",
// and the README did not say that completion needs it.
func TestBashCompletionInABash(t *testing.T) {
	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	bash, err := exec.LookPath("bash")
	if _, serr := os.Stat(bashCompletion); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bash and its bash-completion package are needed: .ci/run installs the package")
		}
		t.Skipf("no bash, or no bash-completion package (%s): apt-get install bash-completion", bashCompletion)
	}
	home := t.TempDir()
	// readline lists the choices at the first Tab, and writes no escapes
	// around a line (bracketed paste) or for a bell.
	inputrc := "set show-all-if-ambiguous on\nset enable-bracketed-paste off\nset bell-style none\n"
	for name, text := range map[string]string{"bench.yaml": "", "notes.txt": "", "inputrc": inputrc} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(hilrig) + ":/usr/bin:/bin", "TERM=xterm", "INPUTRC=" + filepath.Join(home, "inputrc"), "PS1=$ "}
	term := startInTerminal(t, cmd, 200)
	at := term.WaitFor(0, "$ ", 10*time.Second)
	// Each line typed is answered by a prompt; a Tab, by what it
	// completes (readline writes only what it adds, and lists the
	// choices when there are several).
	run := func(line string) {
		term.Type(line + "\n")
		at = term.WaitFor(at, "\n$ ", 10*time.Second)
	}
	complete := func(partial, want string) {
		t.Helper()
		term.Type(partial + "\t")
		at = term.WaitFor(at, want, 10*time.Second)
		term.Type("\x15") // Ctrl-U: clear the line
	}
	run("source <(hilrig completion bash)")
	complete("hilrig sim bottl", "hilrig: completion needs the bash-completion package")
	run("")
	run("source " + bashCompletion)
	complete("hilrig sim bottl", "bottleneck ")
	complete("hilrig demo --cut ", "CP1")
	complete("hilrig sim lte --du", "--duration ")
	complete("hilrig sim lte --bench ", "bench.yaml ") // the yaml files only: the one there is
	term.Type("exit\n")
	if shown, code := term.Wait(10 * time.Second); code != 0 || strings.Contains(shown, "command not found") {
		t.Errorf("bash exited %d; the terminal shows:\n%s", code, shown)
	}
}

// TestReportInABrowser (issue 22, item 7) shows the report of the
// shipped CI suite with a failing case, as CI's artefact is opened, in
// Chromium: a summary table on top, the failed case first and unfolded,
// the others folded (a link unfolds one), the page short and light.
// Before: 625 kB and 19 300 px for these 10 cases, the failed case the
// last of ten sections, every case's plots laid out.
func TestReportInABrowser(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report")
	if r := runHilrig(t, "test", writeCISuite(t, dir, failingCase), "--report", report); r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	page := filepath.Join(report, "index.html")
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	// The weight is the plots' (seven a case, each some 8 kB of lines
	// when drawn without what cannot be seen); 35 kB a case is a budget,
	// not a figure derived from the page.
	const budget = 10 * 35 << 10
	if info.Size() > budget {
		t.Errorf("the page weighs %d kB, over its budget of %d kB", info.Size()>>10, budget>>10)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	type pageState struct {
		Height int
		Open   []bool
		First  string
	}
	s, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](`({height: document.documentElement.scrollHeight,
		open: [...document.querySelectorAll("details.run")].map(d => d.open),
		first: document.querySelector("details.run summary").textContent})`))
	if err != nil {
		t.Fatal(err)
	}
	height, open, first := s.Height, s.Open, s.First
	t.Logf("%d kB, %d px high at 1280 px wide", info.Size()>>10, height)
	// The table (11 rows) and the failed case's details: its text and its
	// four plots, each some 300 px high at this width.
	if height > 3500 {
		t.Errorf("the page is %d px high, more than the table and one case's details", height)
	}
	if len(open) != 10 || !open[0] || slices.Contains(open[1:], true) || !strings.Contains(first, "plateau-budget") {
		t.Errorf("the cases' details: first %q, open %v; want the failed case first and alone unfolded", first, open)
	}
	// A link of the table unfolds its case.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`table a[href="#run-9"]`))); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "the case linked to unfolds", `document.getElementById("run-9").closest("details").open`)
	if t.Failed() {
		screenshot(t, ctx, "report.png")
	}
}
