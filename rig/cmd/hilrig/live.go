package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

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
	host   *web.Host
	server *serverProcess
	status *rig.Status
}

// serve opens the server on the session (when --listen was given);
// mon is the session's monitor. The server runs in a child process (the
// same binary, `hilrig serve-live`), linked to the session (web.Host), so
// that nothing a client does can move a release: the rig's process
// listens (so that a wrong address fails here) and hands the child the
// listener.
func (o liveFlags) serve(ctx context.Context, s *rig.Session, mon *record.Monitor, total time.Duration, show bool, stderr io.Writer) (*running, error) {
	r := &running{s: s, mon: mon}
	if show {
		r.status = rig.NewStatus(stderr, total)
	}
	if o.listen == "" {
		return r, nil
	}
	ln, url, err := web.Listen(o.listen, o.token, stderr)
	if err != nil {
		return nil, err
	}
	defer ln.Close() // the child has its own
	var hostSide net.Conn
	r.server, hostSide, err = startServer(ln, liveServerOptions{Token: o.token, ReadOnly: o.readOnly}, stderr)
	if err != nil {
		return nil, err
	}
	if r.host, err = web.NewHost(s, mon, hostSide, stderr); err != nil {
		r.server.stop()
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
	if r.host != nil {
		defer r.server.stop()
		return r.host.Run(ctx)
	}
	return r.s.Run(ctx)
}

// liveServerOptions are what a server process is told on its standard
// input.
type liveServerOptions struct {
	Token    string `json:"token,omitempty"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

// serverProcess is a live server running as a child process.
type serverProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startServer starts `hilrig serve-live` on ln, linked to the returned
// connection.
func startServer(ln net.Listener, opt liveServerOptions, stderr io.Writer) (*serverProcess, net.Conn, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the live server: %w", err)
	}
	lnFile, err := ln.(*net.TCPListener).File()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the live server: %w", err)
	}
	defer lnFile.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("starting the live server: %w", err)
	}
	hostFile, serverFile := os.NewFile(uintptr(fds[0]), "link"), os.NewFile(uintptr(fds[1]), "link")
	defer serverFile.Close()
	hostSide, err := net.FileConn(hostFile)
	hostFile.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("starting the live server: %w", err)
	}
	options, _ := json.Marshal(opt)
	cmd := exec.Command(self, "serve-live")
	cmd.Stdin, cmd.Stderr = bytes.NewReader(options), stderr
	cmd.ExtraFiles = []*os.File{lnFile, serverFile} // fds 3 and 4
	// Its own process group: a Ctrl-C at the terminal is the rig's to
	// handle, which then ends the run and the server with it. Should the
	// rig die, the link closes and the server exits.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		hostSide.Close()
		return nil, nil, fmt.Errorf("starting the live server: %w", err)
	}
	p := &serverProcess{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	return p, hostSide, nil
}

// stop waits for the server to exit, which it does once it has told its
// clients the run ended, and kills it after a while.
func (p *serverProcess) stop() {
	select {
	case <-p.exited:
	case <-time.After(2 * web.DefaultWriteWait):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// serveLiveCommand is the live server's process (serve), not for people.
func serveLiveCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "serve-live",
		Short:  "serve a run live, as a child process of the rig that runs it",
		Hidden: true,
		Args:   positional(0, 0),
		RunE: action(func(c *cobra.Command, _ []string) int {
			return serveLive(c.InOrStdin(), c.ErrOrStderr())
		}),
	}
}

// serveLive serves the run of the rig at the other end of fd 4 on the
// listener at fd 3, until the rig closes the link.
func serveLive(stdin io.Reader, stderr io.Writer) int {
	// The rig's to stop: it ends the run, and the link tells this process.
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	var opt liveServerOptions
	if err := json.NewDecoder(io.LimitReader(stdin, 64<<10)).Decode(&opt); err != nil {
		return fail(stderr, exitUsage, fmt.Errorf("serve-live is started by hilrig run and sim with --listen: %w", err))
	}
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		return fail(stderr, exitUsage, fmt.Errorf("serve-live: %w", err))
	}
	conn, err := net.FileConn(os.NewFile(4, "link"))
	if err != nil {
		return fail(stderr, exitUsage, fmt.Errorf("serve-live: %w", err))
	}
	srv, err := web.Dial(conn, web.Options{Token: opt.Token, ReadOnly: opt.ReadOnly, Log: stderr})
	if err != nil {
		return fail(stderr, exitFail, fmt.Errorf("the live server: %w", err))
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	<-srv.Done()
	stop()
	if err := <-served; err != nil {
		return fail(stderr, exitFail, fmt.Errorf("the live server: %w", err))
	}
	return exitOK
}
