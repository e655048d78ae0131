package tests

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// targetArch is the architecture the binary under test is built for:
// HILRIG_GOARCH (arm64, arm, 386, ...; for arm, GOARM says which, as it
// does to go build), or the machine's own. A virtual-time run must give
// the same bytes on every architecture, so .ci/run runs the golden tests
// (TestSimTracesUnchanged, the papers') with the binary built for the
// boards, under qemu-user, against the hashes recorded on amd64.
func targetArch() string {
	if arch := os.Getenv("HILRIG_GOARCH"); arch != "" {
		return arch
	}
	return runtime.GOARCH
}

// buildHilrig builds the binary into dir and returns the path the tests
// run: the binary itself, or where it is built for an architecture this
// machine does not run, a script that runs it under qemu-user. Only the
// tests of virtual time are meant to run so: the real-time tests measure
// the emulator's timing, and the live server's child cannot be started
// (qemu-user runs one binary, not what it executes).
func buildHilrig(dir string) (string, error) {
	arch := targetArch()
	binary := filepath.Join(dir, "hilrig")
	if arch != runtime.GOARCH {
		binary += "-" + arch + os.Getenv("GOARM")
	}
	build := exec.Command("go", "build", "-o", binary, "../rig/cmd/hilrig")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if arch != runtime.GOARCH {
		// Static, as a board's image would run it and as qemu-user needs
		// without the target's C library.
		build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
	}
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building hilrig for %s: %w", arch, err)
	}
	emulator, cpu := qemuFor(arch)
	if emulator == "" {
		return binary, nil
	}
	path, err := exec.LookPath(emulator)
	if err != nil {
		if path, err = exec.LookPath(emulator + "-static"); err != nil {
			return "", fmt.Errorf("hilrig for %s runs under %s, which is not installed (Debian: apt-get install qemu-user)", arch, emulator)
		}
	}
	sysroot, err := sysrootFor(binary, arch)
	if err != nil {
		return "", err
	}
	script := filepath.Join(dir, "hilrig")
	run := fmt.Sprintf("#!/bin/sh\nexec %q -L %q -cpu %s %q \"$@\"\n", path, sysroot, cpu, binary)
	return script, os.WriteFile(script, []byte(run), 0o755)
}

// sysrootFor is where qemu-user finds the dynamic loader and C library of
// arch that binary asks for: a build that can load FMUs (linux/arm64, as
// amd64) is dynamically linked against glibc even without cgo
// (rig/fmu's doc), as it runs on a board's Debian or Raspberry Pi OS.
// Debian's cross C libraries (libc6-arm64-cross, ...) install one in
// /usr/<triplet>. A static binary needs none: "/".
func sysrootFor(binary, arch string) (string, error) {
	f, err := elf.Open(binary)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var interpreter string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return "", fmt.Errorf("%s: its interpreter: %w", binary, err)
			}
			interpreter = strings.TrimRight(string(b), "\x00")
		}
	}
	if interpreter == "" {
		return "/", nil
	}
	cross, ok := map[string]struct{ triplet, pkg string }{
		"arm64": {"aarch64-linux-gnu", "libc6-arm64-cross"},
		"arm":   {"arm-linux-gnueabihf", "libc6-armhf-cross"},
	}[arch]
	if !ok {
		return "", fmt.Errorf("hilrig for %s is dynamically linked, and these tests know no cross C library to run it with", arch)
	}
	sysroot := "/usr/" + cross.triplet
	if _, err := os.Stat(filepath.Join(sysroot, interpreter)); err != nil {
		return "", fmt.Errorf("hilrig for %s is dynamically linked (it can load FMUs) and runs under qemu-user with %s's C library, which is not installed (Debian: apt-get install %s)", arch, arch, cross.pkg)
	}
	return sysroot, nil
}

// qemuFor names the qemu-user emulator that runs arch on this machine and
// the CPU it emulates, the oldest a build for arch must run on (an armv7
// instruction in a GOARM=6 build faults on the ARM1176 of a Raspberry Pi
// 1 or Zero), or "" when the machine runs arch itself.
func qemuFor(arch string) (emulator, cpu string) {
	switch {
	case arch == runtime.GOARCH, arch == "386" && runtime.GOARCH == "amd64":
		return "", ""
	case arch == "arm64":
		return "qemu-aarch64", "cortex-a53" // Raspberry Pi 3, Zero 2
	case arch == "arm" && strings.TrimSuffix(os.Getenv("GOARM"), ",hardfloat") == "6":
		return "qemu-arm", "arm1176" // Raspberry Pi 1, Zero
	case arch == "arm":
		return "qemu-arm", "cortex-a7" // Raspberry Pi 2; GOARM=7 is Go's default
	}
	return "qemu-" + arch, "max"
}

// The compiler's arm64 mnemonics for a fused multiply-add or -subtract.
var fusedMultiplyAdd = regexp.MustCompile(`\((/[^)]+\.go):(\d+)\)\s+F(N?M(ADD|SUB))[DS]\s`)

// inexactCall matches a call of a function whose result differs by
// architecture: math's transcendental functions (the exported name, or
// the arch* or pure-Go function it inlines to), math/cmplx, the runtime's
// complex division (which complex128's / compiles to) and gonum's linear
// algebra (its BLAS is assembly on amd64 and fused elsewhere; storing
// and reading a matrix is exact).
var inexactCall = regexp.MustCompile(`\((/[^)]+\.go):(\d+)\)\s+CALL\s+(` +
	`math\.(?:arch)?(?i:exp|exp2|expm1|log|log10|log1p|log2|logb|pow|pow10|sin|cos|sincos|tan|tanh|sinh|cosh|asin|acos|atan|atan2|asinh|acosh|atanh|hypot|cbrt|erf|erfc|erfinv|erfcinv|gamma|lgamma|j0|j1|jn|y0|y1|yn)` +
	`|math/cmplx\.\w+|runtime\.complex128div|gonum\.org/v1/gonum/(?:lapack|blas)[\w/.()*]*` +
	`|gonum\.org/v1/gonum/(?:mat|floats|stat)\.[\w()*.]*(?:Solve\w*|Factorize|Mul\w*|Inverse|Exp|Pow|Det|LogDet|Norm|Cond|Product|Dot|Sum|Values|Vectors))\(SB\)`)

// allowedInexact are the calls TestSameBitsOnEveryArchitecture lets
// through, by calling function and callee, and why.
var allowedInexact = map[[2]string]string{
	{"github.com/hilrig/hilrig/firmware/device/virtual.(*Lag).advance", "math.archExp"}:                                      "a stand-in plant for the firmware's host builds and tests, on the wall clock; the rig never plays it",
	{"github.com/hilrig/hilrig/firmware/device/virtual.(*Lag).advance", "math.exp"}:                                          "the same, where math's Exp is not assembly",
	{"github.com/hilrig/hilrig/emulator/plant.(*Integrator).checkRK4Stability", "gonum.org/v1/gonum/mat.(*Eigen).Factorize"}: "the RK4 stability check's eigenvalues, which only decide whether a step is refused (emulator/plant's doc)",
}

// function is the line that starts a function's assembly.
var function = regexp.MustCompile(`^(\S+) STEXT `)

// TestSameBitsOnEveryArchitecture compiles hilrig for arm64 and fails on
// any multiply-add the compiler fused in it and any call of a function
// whose result differs by architecture (emulator/plant's doc has the
// rules; emulator/detmath has the functions to call instead). A fused
// x*y + z is rounded once, a result that amd64 does not give. The
// compiler fuses the same way on ppc64, s390x, riscv64, loong64 and
// amd64 at GOAMD64=v3; .ci/run runs the golden tests under qemu-user,
// which shows any such difference that reaches a trace, and this test
// finds those that have not reached one yet. math.FMA is explicit and
// rounds once everywhere, and is allowed.
func TestSameBitsOnEveryArchitecture(t *testing.T) {
	if raceDetector {
		t.Skip("a compilation: once, in the run without the race detector")
	}
	const module = "github.com/hilrig/hilrig"
	cmd := exec.Command("go", "build", "-gcflags="+module+"/...=-S", "./...")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build for arm64: %v\n%.2000s", err, out)
	}
	source := func(file, n string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			return "" // the toolchain's, say: the function is named
		}
		i, _ := strconv.Atoi(n)
		if lines := strings.Split(string(b), "\n"); i >= 1 && i <= len(lines) {
			return strings.TrimSpace(lines[i-1])
		}
		return ""
	}
	seen := map[string]bool{}
	fn, functions, fused, calls := "", 0, 0, 0
	for _, asm := range strings.Split(string(out), "\n") {
		if m := function.FindStringSubmatch(asm); m != nil {
			fn = m[1]
			functions++
			continue
		}
		if m := fusedMultiplyAdd.FindStringSubmatch(asm); m != nil {
			fused++
			src := source(m[1], m[2])
			if strings.Contains(src, "math.FMA(") {
				continue // asked for
			}
			if where := m[1] + ":" + m[2]; !seen[where] {
				seen[where] = true
				t.Errorf("%s (in %s): the compiler fuses a multiply-add here (or where this is inlined, with a product passed to it): round each product before adding it, float64(x*y) + z\n\t%s", where, fn, src)
			}
		}
		if m := inexactCall.FindStringSubmatch(asm); m != nil {
			calls++
			if _, ok := allowedInexact[[2]string{fn, m[3]}]; ok {
				continue
			}
			if key := fn + " " + m[3]; !seen[key] {
				seen[key] = true
				t.Errorf("%s calls %s (%s:%s), whose result differs by architecture: use emulator/detmath's\n\t%s", fn, m[3], m[1], m[2], source(m[1], m[2]))
			}
		}
	}
	if functions < 1000 {
		t.Fatalf("go build printed the assembly of %d functions:\n%.2000s", functions, out)
	}
	t.Logf("arm64: %d functions, %d fused multiply-adds (math.FMA's) and %d calls of architecture-dependent functions (those allowed)", functions, fused, calls)
}

// TestSystemdUnit: the unit README.md's "On a board" gives a rig that
// runs its bench unattended is one systemd accepts, without a warning
// (systemd-analyze verify, from Debian's systemd, which .ci/run installs;
// without it the check is skipped, except in CI), and runs the command
// and flags hilrig has.
func TestSystemdUnit(t *testing.T) {
	const unit = "../rig/cmd/hilrig/systemd/hilrig.service"
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hilrig run --bench ", "--trace ", "--signals ", "--summary ", "--listen ", "--token-file ", "RestartPreventExitStatus=2", "AmbientCapabilities=CAP_SYS_NICE CAP_IPC_LOCK"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the unit has no %q", want)
		}
	}
	for _, flag := range []string{"--bench", "--trace", "--signals", "--summary", "--listen", "--token-file"} {
		if out := runHilrig(t, "run", "--help"); !strings.Contains(out.stdout, flag+" ") {
			t.Errorf("hilrig run has no %s", flag)
		}
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-analyze is missing: install systemd")
		}
		t.Skip("systemd-analyze is missing (Debian's systemd): the unit is not verified")
	}
	out, err := exec.Command(analyze, "verify", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s", unit, err, out)
	}
}
