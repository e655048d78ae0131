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
		{[]string{"--help"}, 0, "Usage: pid --port PATH [flags]", ""},
		{nil, 2, "", "pid: give the port with --port, and nothing else"},
		{[]string{"--port", "x", "--durr", "1"}, 2, "", "pid: unknown flag: --durr (see pid --help)"},
		{[]string{"--port", "x", "--rate", "0"}, 2, "", "pid: --rate: a rate of 0 Hz"},
		{[]string{"--port", "x", "--sample-layout", "f16"}, 2, "", `pid: --sample-layout: field 1: no type "f16"`},
		{[]string{"--port", "x", "--command-layout", "f32le,f32le"}, 2, "", "pid: a command has one field, u, not 2"},
		{[]string{"--port", "x", "--measurement-field", "0"}, 2, "", "pid: --measurement-field counts from 1"},
		{[]string{"--port", "x", "--ki", "-1"}, 2, "", "pid: gains must have one sign"},
		{[]string{"--port", "/nonexistent/tty"}, 1, "", "pid: /nonexistent/tty: "},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.HasPrefix(stdout.String(), tc.stdout) || !strings.HasPrefix(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stdout %.40q, stderr %q; want %d, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.want)
		}
	}
}
