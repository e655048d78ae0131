package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, want string
	}{
		{[]string{"--help"}, 0, "Usage: plantnode --port PATH [flags]", ""},
		{nil, 2, "", "plantnode: give the port with --port, and nothing else"},
		{[]string{"--port", "x", "--plant", "motor"}, 2, "", `plantnode: --plant: "motor" is not lag or echo`},
		{[]string{"--port", "x", "--safe", "0,1"}, 2, "", "plantnode: 2 safe levels for 1 outputs"},
		{[]string{"--port", "x", "--sample-layout", "u8,u8"}, 2, "", "plantnode: the simulated plant pairs each output with an input: 2 inputs, 1 outputs"},
		{[]string{"--port", "x", "--watchdog", "0s"}, 2, "", "plantnode: the watchdog time must be positive"},
		{[]string{"--port", "/nonexistent/tty"}, 1, "", "plantnode: /nonexistent/tty: "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.HasPrefix(stdout.String(), tc.stdout) || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stdout %.40q, stderr %q; want %d, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
}
