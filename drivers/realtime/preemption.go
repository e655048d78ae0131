package realtime

import "strings"

// PreemptionHoldsUp reports whether a kernel with this preemption model
// (KernelPreemption's answer) makes a real-time thread wait for other
// threads' system calls: it waits, runnable, for whatever call another
// thread is in on its CPU to reach a point where it yields.
func PreemptionHoldsUp(model string) bool { return model == "none" || model == "voluntary" }

// Preemption works out a kernel's preemption model, "none", "voluntary",
// "full", "lazy" or "rt", from what the kernel says of itself: version is
// uname's version string ("#1 SMP PREEMPT_DYNAMIC ..."), debugfs the
// content of /sys/kernel/debug/sched/preempt ("none voluntary (full)
// lazy": the current model in parentheses), cmdline the boot command line,
// config the kernel's build configuration; each may be empty. A kernel
// built with PREEMPT_DYNAMIC chooses at boot (preempt=) and may change at
// run time (debugfs), from its configuration's default.
func Preemption(version, debugfs, cmdline, config string) string {
	words := strings.Fields(version)
	has := func(w string) bool {
		for _, v := range words {
			if v == w {
				return true
			}
		}
		return false
	}
	switch {
	case has("PREEMPT_RT"):
		return "rt"
	case has("PREEMPT_DYNAMIC"):
		if _, after, ok := strings.Cut(debugfs, "("); ok {
			if model, _, ok := strings.Cut(after, ")"); ok && model != "" {
				return model
			}
		}
		for _, arg := range strings.Fields(cmdline) {
			if arg == "--" {
				break // what follows is init's
			}
			if model, ok := strings.CutPrefix(arg, "preempt="); ok && model != "" {
				return model
			}
		}
		return configPreemption(config)
	case has("PREEMPT_LAZY"):
		return "lazy"
	case has("PREEMPT"):
		return "full"
	}
	// Neither PREEMPT nor PREEMPT_DYNAMIC in the version: the kernel does
	// not preempt itself; its configuration says whether it yields at the
	// points a voluntary kernel adds.
	if m := configPreemption(config); m == "voluntary" {
		return m
	}
	if version == "" {
		return ""
	}
	return "none"
}

// configPreemption is the preemption model a kernel's configuration
// chooses (or, with PREEMPT_DYNAMIC, starts with); "" if it says none.
func configPreemption(config string) string {
	models := map[string]string{
		"CONFIG_PREEMPT_RT=y": "rt", "CONFIG_PREEMPT_NONE=y": "none",
		"CONFIG_PREEMPT_VOLUNTARY=y": "voluntary", "CONFIG_PREEMPT=y": "full",
		"CONFIG_PREEMPT_LAZY=y": "lazy",
	}
	found := ""
	for line := range strings.Lines(config) {
		if m, ok := models[strings.TrimSpace(line)]; ok && (found == "" || m == "rt") {
			found = m // the choice of model is one option; RT comes with PREEMPT=y
		}
	}
	return found
}
