package tests

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/web"
)

// hilrigEnv runs the binary with args and HILRIG_TOKEN set to token, and
// returns its outputs and exit code.
func hilrigEnv(t *testing.T, token string, args ...string) result {
	t.Helper()
	cmd := exec.Command(hilrig, args...)
	cmd.Env = append(os.Environ(), "HILRIG_TOKEN="+token)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// TestWeakTokensRefused: a blank token, one too short to resist guessing,
// or one with a space or a control character is refused before anything
// runs (exit 2), from --token, --token-file or HILRIG_TOKEN, on any
// address; so are two sources of the token at once. (A run that took
// one would last its second.)
func TestWeakTokensRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	blankFile, shortFile, goodFile := write("blank", " \n"), write("short", "s3cret\n"), write("good", "0123456789abcdef\n")
	sim := []string{"sim", "bottleneck", "--duration", "1s", "--realtime-view"}
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0", "--token", " "}, "", "--token: the token has a space at character 1"},
		{[]string{"--listen", "127.0.0.1:0", "--token", " "}, "", "--token: the token has a space at character 1"},
		{[]string{"--listen", "0.0.0.0:0", "--token", ""}, "", "--token: the token is empty"},
		{[]string{"--listen", "0.0.0.0:0", "--token", "s3cret"}, "", "--token: the token is 6 characters long, shorter than the 16 that resist guessing"},
		{[]string{"--listen", "0.0.0.0:0", "--token", "0123456789abcdef\t"}, "", `--token: the token has the control character '\t' at character 17`},
		{[]string{"--listen", "0.0.0.0:0"}, "   ", "$HILRIG_TOKEN: the token has a space at character 1"},
		{[]string{"--listen", "0.0.0.0:0"}, "s3cret", "$HILRIG_TOKEN: the token is 6 characters long"},
		{[]string{"--listen", "0.0.0.0:0", "--token-file", blankFile}, "", "--token-file " + blankFile + ": the token is empty"},
		{[]string{"--listen", "0.0.0.0:0", "--token-file", shortFile}, "", "--token-file " + shortFile + ": the token is 6 characters long"},
		{[]string{"--listen", "0.0.0.0:0", "--token-file", dir}, "", "--token-file " + dir + ": read " + dir + ": is a directory"},
		{[]string{"--listen", "0.0.0.0:0", "--token-file", goodFile, "--token", "0123456789abcdef"}, "", "--token and --token-file both give the token: give one"},
		{[]string{"--token-file", goodFile}, "", "--token-file is for --listen"},
		{[]string{"--listen", "0.0.0.0:0"}, "", "give a token with --token or HILRIG_TOKEN, or --token-file FILE"},
	} {
		start := time.Now()
		r := hilrigEnv(t, tc.env, append(sim, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "is live at") {
			t.Errorf("%q (HILRIG_TOKEN=%q): exit %d after %v, want 2 and %q:\n%s", tc.args, tc.env, r.code, time.Since(start).Round(time.Millisecond), tc.want, r.stderr)
		}
	}
}

// TestTokenFile: --token-file names a file that does not exist: the rig
// writes a new token there, readable by its owner only, says so, and
// serves the run with it; a second run reads the same file and takes the
// same token. The query's token, %20, lets no one in.
func TestTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	var tokens []string
	for run := range 2 {
		addr := freeAddr(t)
		cmd := exec.Command(hilrig, "sim", "bottleneck", "--duration", "60s", "--realtime-view", "--listen", addr, "--token-file", file)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		code, body := getWhenUp(t, "http://"+addr+"/api/v1/run")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		token := strings.TrimSuffix(string(data), "\n")
		tokens = append(tokens, token)
		if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 || len(token) != 32 || strings.Trim(token, "0123456789abcdef") != "" {
			t.Errorf("run %d: the token file: %v %v %q", run, info.Mode(), err, data)
		}
		if code != 401 {
			t.Errorf("run %d: without the token: %d %s", run, code, body)
		}
		for _, tc := range []struct {
			query, auth string
			code        int
		}{
			{"", "Bearer " + token, 200},
			{"?token=" + token, "", 200},
			{"?token=%20", "", 401},
			{"", "Bearer  ", 401},
			{"?token=" + token[:16], "", 401},
		} {
			req, _ := http.NewRequest("PATCH", "http://"+addr+"/api/v1/hops/core-up"+tc.query, strings.NewReader(`{"delay": "5ms"}`))
			req.Header.Set("Content-Type", "application/json")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code {
				t.Errorf("run %d: PATCH%s with %q: %d %s", run, tc.query, tc.auth, resp.StatusCode, answer)
			}
		}
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("run %d: %v\n%s", run, err, stderr.String())
		}
		wrote := strings.Contains(stderr.String(), "hilrig: --token-file "+file+" did not exist: wrote a new token there")
		if wrote != (run == 0) {
			t.Errorf("run %d: stderr:\n%s", run, stderr.String())
		}
	}
	if tokens[0] != tokens[1] {
		t.Errorf("the second run took %q, the first %q", tokens[1], tokens[0])
	}
}

// TestChangeBeyondTheLongestDuration: a change whose duration is longer
// than the longest hilrig takes (a century) is a 400 at its key, and
// changes nothing; before, a delay of 9223372036854775807ns was taken,
// and the hop delivered frames before they were sent.
func TestChangeBeyondTheLongestDuration(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	_, before := l.request("GET", "/api/v1/hops/down", "")
	for _, tc := range []struct{ method, path, body, at string }{
		{"PATCH", "/api/v1/hops/down", `{"delay": "9223372036854775807ns"}`, "delay"},
		{"PATCH", "/api/v1/hops/down", `{"jitter": {"dist": "normal", "sigma": "1000000h"}}`, "jitter.sigma"},
		{"PATCH", "/api/v1/hops/down", `{"delay": "80ms", "for": "9223372036.854775807s"}`, "for"},
		{"POST", "/api/v1/hops/down/outage", `{"mode": "hold", "for": "9223372036854775807ns"}`, "for"},
		{"POST", "/api/v1/phases/long", `{"for": "9223372036854775807ns"}`, "for"},
	} {
		code, body := l.request(tc.method, tc.path, tc.body)
		var e struct{ Error, Path string }
		if err := json.Unmarshal([]byte(body), &e); code != 400 || err != nil || e.Path != tc.at || !strings.Contains(e.Error, "is too long: hilrig takes durations up to 876600h") {
			t.Errorf("%s %s %s: %d %s; want 400 at %s", tc.method, tc.path, tc.body, code, body, tc.at)
		}
	}
	if _, after := l.request("GET", "/api/v1/hops/down", ""); after != before {
		t.Errorf("the hop changed: %s, then %s", before, after)
	}
	if code, evs := l.request("GET", "/api/v1/events", ""); code != 200 || strings.TrimSpace(evs) != "[]" {
		t.Errorf("events: %d %s", code, evs)
	}
}
