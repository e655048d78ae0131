package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// liveFlags serve a run while it goes on: the live API, telemetry,
// metrics and dashboard of rig/web.
type liveFlags struct {
	listen, token, tokenFile string
	readOnly                 bool
	cmd                      *cobra.Command // whose flags they are
}

func addLiveFlags(c *cobra.Command, o *liveFlags) {
	f := c.Flags()
	f.StringVar(&o.listen, "listen", "", "serve the run live on `ADDR` (host:port; no host is 127.0.0.1, no port 8470, e.g. "+web.DefaultAddr+"): JSON API, WebSocket telemetry, Prometheus metrics, dashboard")
	f.StringVar(&o.token, "token", "", "with --listen, require `TOKEN` on every request (default $"+web.TokenEnv+"); needed on an address beyond the loopback; other users see it in ps: prefer --token-file")
	f.StringVar(&o.tokenFile, "token-file", "", "with --listen, require the token in `FILE` (written, 128 random bits, when FILE does not exist)")
	f.BoolVar(&o.readOnly, "read-only", false, "with --listen, serve the run without the right to change it")
	o.cmd = c
}

// maxTokenFile bounds what --token-file reads: a token is a line.
const maxTokenFile = 4 << 10

// check refuses the live flags without --listen, a token too weak to
// protect the server, and a non-loopback address without a token, before
// anything runs. The token is --token's, --token-file's, or else
// $HILRIG_TOKEN's.
func (o *liveFlags) check() error {
	given := o.cmd != nil && o.cmd.Flags().Changed("token") // even empty
	if o.listen == "" {
		switch {
		case o.readOnly:
			return fmt.Errorf("--read-only is for --listen: give --listen ADDR too")
		case given:
			return fmt.Errorf("--token is for --listen: give --listen ADDR too")
		case o.tokenFile != "":
			return fmt.Errorf("--token-file is for --listen: give --listen ADDR too")
		}
		return nil
	}
	from := "--token"
	switch {
	case given && o.tokenFile != "":
		return fmt.Errorf("--token and --token-file both give the token: give one")
	case given:
	case o.tokenFile != "":
		from = "--token-file " + o.tokenFile
		var err error
		if o.token, err = readTokenFile(o.tokenFile, o.cmd.ErrOrStderr()); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	default:
		// An empty variable is an unset one, as shells make it.
		from, o.token = "$"+web.TokenEnv, os.Getenv(web.TokenEnv)
		if o.token == "" {
			return web.CheckListen(web.ResolveAddr(o.listen), "")
		}
	}
	if err := web.CheckToken(o.token); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	return web.CheckListen(web.ResolveAddr(o.listen), o.token)
}

// readTokenFile reads the token in path, without the spaces and line
// ends around it; when there is no such file it writes a new token there
// (readable by its owner only), says so on log, and returns it. Any kind
// of file is read, up to maxTokenFile bytes: a pipe too, as a shell's
// <(command) gives.
func readTokenFile(path string, log io.Writer) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return writeTokenFile(path, log)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxTokenFile {
		return "", fmt.Errorf("is over %d bytes: a token file holds one token", maxTokenFile)
	}
	return strings.TrimSpace(string(data)), nil
}

func writeTokenFile(path string, log io.Writer) (string, error) {
	token := web.NewToken()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	fmt.Fprintf(log, "hilrig: --token-file %s did not exist: wrote a new token there (128 random bits, readable by you only)\n", path)
	return token, nil
}

// running is a session about to run, shown on stderr (a status line when
// show is set) and served when --listen was given.
type running struct {
	s      *rig.Session
	mon    *record.Monitor
	srv    *web.Server
	status *rig.Status
}

// serve opens the server on the session (when --listen was given);
// mon is the session's monitor.
func (o liveFlags) serve(ctx context.Context, s *rig.Session, mon *record.Monitor, total time.Duration, show bool, stderr io.Writer) (*running, error) {
	r := &running{s: s, mon: mon}
	if show {
		r.status = rig.NewStatus(stderr, total)
	}
	if o.listen == "" {
		return r, nil
	}
	r.srv = web.New(s, mon, web.Options{Token: o.token, ReadOnly: o.readOnly, Log: stderr})
	url, err := r.srv.Start(ctx, o.listen)
	if err != nil {
		return nil, err
	}
	what := "watch and steer it"
	if o.readOnly {
		what = "watch it"
	}
	fmt.Fprintf(stderr, "hilrig: the run is live at %s: %s there, or with the API (README: Watching and steering a run live)\n", url, what)
	return r, nil
}

// run runs the session, with its status line.
func (r *running) run(ctx context.Context) (record.Summary, error) {
	if r.status != nil {
		follow, stop := context.WithCancel(ctx)
		followed := make(chan struct{})
		go func() {
			r.status.Follow(follow, r.mon, 250*time.Millisecond)
			close(followed)
		}()
		defer func() {
			stop()
			<-followed
			r.status.Close(r.mon)
		}()
	}
	if r.srv != nil {
		return r.srv.Run(ctx)
	}
	return r.s.Run(ctx)
}
