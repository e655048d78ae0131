package realtime

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestPreemption(t *testing.T) {
	const (
		dynamic = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.57-1 (2025-11-05)"
		noneCfg = "# CONFIG_PREEMPT_VOLUNTARY is not set\nCONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_DYNAMIC=y\n"
		volCfg  = "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n"
	)
	for _, c := range []struct {
		name, version, debugfs, cmdline, config, want string
	}{
		{"rt", "#1 SMP PREEMPT_RT Debian 6.12.57-1", "", "", "", "rt"},
		{"rt config with PREEMPT=y", "#1 SMP PREEMPT_DYNAMIC", "", "", "CONFIG_PREEMPT=y\nCONFIG_PREEMPT_RT=y\n", "rt"},
		{"dynamic, debugfs says", dynamic, "none voluntary (full) lazy\n", "preempt=none", noneCfg, "full"},
		{"dynamic, debugfs unreadable, boot line says", dynamic, "", "quiet preempt=voluntary ro", noneCfg, "voluntary"},
		{"dynamic, init's arguments are not the kernel's", dynamic, "", "quiet -- preempt=full", noneCfg, "none"},
		{"dynamic, the configuration's default", dynamic, "", "quiet", volCfg, "voluntary"},
		{"dynamic, nothing readable", dynamic, "", "", "", ""},
		{"this VM", "#1 SMP PREEMPT_DYNAMIC @0", "", "console=ttyS0 quiet -- --firecracker-init", noneCfg, "none"},
		{"full, built in", "#1 SMP PREEMPT Tue Jan 1", "", "", "", "full"},
		{"lazy, built in", "#1 SMP PREEMPT_LAZY", "", "", "", "lazy"},
		{"neither", "#1 SMP Mon Jan 1", "", "", "", "none"},
		{"neither, voluntary configured", "#1 SMP Mon Jan 1", "", "", "CONFIG_PREEMPT_VOLUNTARY=y\n", "voluntary"},
		{"no version", "", "", "", "", ""},
		{"a word that only contains PREEMPT", "#1 SMP NOPREEMPTION", "", "", "", "none"},
	} {
		if got := Preemption(c.version, c.debugfs, c.cmdline, c.config); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPreemptionHoldsUp(t *testing.T) {
	for model, want := range map[string]bool{"none": true, "voluntary": true, "full": false, "lazy": false, "rt": false, "": false} {
		if got := PreemptionHoldsUp(model); got != want {
			t.Errorf("%q: %v, want %v", model, got, want)
		}
	}
}

// TestKernelPreemptionHere: where the kernel's configuration can be read
// (compressed in /proc, or Debian's copy in /boot) the model is known.
func TestKernelPreemptionHere(t *testing.T) {
	model := KernelPreemption()
	t.Logf("this kernel's preemption: %q", model)
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	config := []string{"/proc/config.gz", "/boot/config-" + unix.ByteSliceToString(u.Release[:])}
	for _, name := range config {
		if _, err := os.Stat(name); err == nil && model == "" {
			t.Errorf("%s is there, and the model unknown", name)
		}
	}
}

func FuzzPreemption(f *testing.F) {
	f.Add("#1 SMP PREEMPT_DYNAMIC", "none (voluntary) full", "preempt=full", "CONFIG_PREEMPT_NONE=y\n")
	f.Add("#1 SMP PREEMPT_DYNAMIC", "(", "preempt= --", "")
	f.Fuzz(func(t *testing.T, version, debugfs, cmdline, config string) {
		Preemption(version, debugfs, cmdline, config) // never panics
	})
}
