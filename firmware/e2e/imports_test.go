package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFirmwareLogicNeedsNoHost keeps the firmware's logic portable: the
// packages a device runs import nothing of the host's (no serial library,
// no system calls, no files, no network, no reflection or unsafe), so
// TinyGo builds them for a microcontroller; only firmware/cmd and the
// tests' helpers touch the host.
func TestFirmwareLogicNeedsNoHost(t *testing.T) {
	cmd := exec.Command(goTool(t), "list", "-json", "./firmware/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	direct := []string{"os", "syscall", "reflect", "unsafe", "net", "go.bug.st/serial", "golang.org/x/sys/unix"}
	transitive := []string{"go.bug.st/", "golang.org/x/sys", "net"}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for {
		var pkg struct {
			ImportPath    string
			Imports, Deps []string
		}
		if err := dec.Decode(&pkg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(pkg.ImportPath, "github.com/hilrig/hilrig/")
		if strings.HasPrefix(rel, "firmware/cmd") || strings.HasPrefix(rel, "firmware/internal") || rel == "firmware/e2e" {
			continue
		}
		checked++
		for _, imp := range pkg.Imports {
			for _, bad := range direct {
				if imp == bad {
					t.Errorf("%s imports %s", rel, imp)
				}
			}
		}
		for _, dep := range pkg.Deps {
			for _, bad := range transitive {
				if dep == bad || strings.HasPrefix(dep, bad+"/") || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) {
					t.Errorf("%s depends on %s", rel, dep)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d packages", checked)
	}
}

func goTool(t testing.TB) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
