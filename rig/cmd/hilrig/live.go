package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// liveFlags serve a run while it goes on: the live API, telemetry,
// metrics and dashboard of rig/web.
type liveFlags struct {
	listen, token string
	readOnly      bool
}

func addLiveFlags(c *cobra.Command, o *liveFlags) {
	f := c.Flags()
	f.StringVar(&o.listen, "listen", "", "serve the run live on `ADDR` (host:port; no host is 127.0.0.1, no port 8470, e.g. "+web.DefaultAddr+"): JSON API, WebSocket telemetry, Prometheus metrics, dashboard")
	f.StringVar(&o.token, "token", "", "with --listen, require `TOKEN` on every request (default $"+web.TokenEnv+"); needed on an address beyond the loopback")
	f.BoolVar(&o.readOnly, "read-only", false, "with --listen, serve the run without the right to change it")
}

// check refuses the live flags without --listen, and a non-loopback
// address without a token, before anything runs.
func (o *liveFlags) check() error {
	if o.listen == "" {
		switch {
		case o.readOnly:
			return fmt.Errorf("--read-only is for --listen: give --listen ADDR too")
		case o.token != "":
			return fmt.Errorf("--token is for --listen: give --listen ADDR too")
		}
		return nil
	}
	if o.token == "" {
		o.token = os.Getenv(web.TokenEnv)
	}
	return web.CheckListen(web.ResolveAddr(o.listen), o.token)
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
