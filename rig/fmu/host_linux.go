package fmu

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// HostCommand is the argument that makes a program an isolated FMU's
// process. Isolated starts the running executable again with it, so a
// program that isolates FMUs calls ServeHost when it is given
// HostCommand as its first argument: hilrig has the hidden command
// `hilrig fmu-host`, a test binary its TestMain.
const HostCommand = "fmu-host"

// The host's descriptors besides the standard ones.
const (
	hostMemoryFD  = 3 // the shared memory
	hostControlFD = 4 // the control socket: the start, and the rig's life
)

// ServeHost runs an isolated FMU for the rig that started this process:
// it loads the FMU the rig unpacked, steps it at the rig's requests, and
// returns the process's exit status when the rig closes it. It is for
// Isolated's child, not for people.
func ServeHost() int {
	// The FMU's calls, and with them its thread-local state, stay on one
	// thread.
	runtime.LockOSThread()
	// The rig's to stop: it ends the FMU, and the control socket tells
	// this process should the rig die.
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	closeInherited()
	control := os.NewFile(hostControlFD, "control")
	var req startRequest
	if err := readMessage(control, &req); err != nil {
		fmt.Fprintf(os.Stderr, "hilrig %s: %v: this command is the process of an isolated FMU, which hilrig starts\n", HostCommand, err)
		return 2
	}
	reply := startReply{Protocol: protocol}
	s, k, err := startHost(req, &reply)
	if err != nil {
		reply.Err = encodeError(err)
	}
	if err := writeMessage(control, &reply); err != nil || reply.Err != nil {
		return 0
	}
	go lifeline(control, req.Dir)
	serve(s, k)
	return 0
}

// startHost loads the FMU, starts stepping it and maps the link.
func startHost(req startRequest, reply *startReply) (*fmi.Stepper, *link, error) {
	if req.Protocol != protocol {
		return nil, nil, fmt.Errorf("the FMU's process speaks protocol %d, the rig %d: is hilrig being replaced?", protocol, req.Protocol)
	}
	data, err := readLimited(filepath.Join(req.Dir, fmi.DescriptionFile), fmi.DefaultLimits.MaxDescription)
	if err != nil {
		return nil, nil, err
	}
	d, err := fmi.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", req.Path, err)
	}
	// The rig unpacked the FMU and removes it: this unit is never closed.
	u := &Unit{Path: req.Path, Description: d, dir: req.Dir, libs: map[string]*library{}}
	cfg := req.Config.config()
	inst, err := u.instantiate(req.Library, cfg.Kind, Options{Name: req.Name, LoggingOn: req.LoggingOn})
	if err != nil {
		return nil, nil, err
	}
	s, err := fmi.NewStepper(d, inst, cfg)
	if err != nil {
		return nil, nil, err
	}
	ins, outs := s.InputSignals(), s.OutputSignals()
	l := newLayout(len(ins), len(outs))
	if err := unix.Ftruncate(hostMemoryFD, int64(l.size)); err != nil {
		return nil, nil, fmt.Errorf("sizing the shared memory: %w", err)
	}
	k, err := mapLink(hostMemoryFD, len(ins), len(outs))
	if err != nil {
		return nil, nil, err
	}
	inst.Log().setMirror(k.writeLine)
	for _, sig := range ins {
		reply.Inputs = append(reply.Inputs, sig.Name)
	}
	reply.Values = make([]uint64, len(outs))
	for _, sig := range outs {
		reply.Outputs = append(reply.Outputs, sig.Name)
	}
	s.Outputs(k.out)
	for i, v := range k.out {
		reply.Values[i] = math.Float64bits(v)
	}
	reply.Time, reply.Stats = math.Float64bits(s.Time()), s.Stats()
	return s, k, nil
}

// serve answers the rig's requests until it asks to close. Its thread is
// locked and waits on the futex, so it checks in with Go's scheduler
// between requests (realtime.CheckIn): otherwise the process's monitor,
// at the rig's FMU priority, woke 2 600 times a second during a run.
func serve(s *fmi.Stepper, k *link) {
	var checkIn realtime.CheckIn
	for n := nextNumber(0); ; n = nextNumber(n) {
		checkIn.Pass()
		await(&k.h.request, &k.h.hostSleep, n, time.Time{}, 0, nil)
		// The request is read before the response is posted: after it, the
		// rig writes the next.
		op := k.req.op
		var err error
		switch op {
		case opStep:
			if k.req.set != 0 {
				s.Set(k.in)
			}
			err = s.Step(k.req.to)
		case opClose:
			err = s.Close()
		default:
			err = fmt.Errorf("the rig asked for operation %d, which the FMU's process does not know", op)
		}
		k.resp.time, k.resp.stats = s.Time(), s.Stats()
		s.Outputs(k.out)
		k.resp.result, k.resp.errLen = resultOK, 0
		if err != nil {
			k.resp.result = resultRefused
			if s.Err() != nil || op == opClose {
				k.resp.result = resultFailed
			}
			k.writeReport(err)
		}
		post(&k.h.response, &k.h.rigSleep, n)
		if op == opClose {
			return
		}
	}
}

// nextNumber numbers requests and responses: never 0, where both start,
// nor deadWord.
func nextNumber(n uint32) uint32 {
	n++
	if n == deadWord {
		n = 1
	}
	return n
}

// lifeline waits for the rig's end of the control socket to close, and
// then ends this process, removing the unpacked FMU. The rig closes it
// only once this process has ended, so its closing here means the rig
// has died (or replaced itself by exec: the socket is closed on exec
// there), and nothing else will remove the files.
func lifeline(control *os.File, dir string) {
	var b [1]byte
	control.Read(b[:])
	os.RemoveAll(dir)
	os.Exit(0)
}

// closeInherited closes the descriptors this process was given by
// mistake: any but its own (the standard three, the link's two) that is
// not closed on exec, which is what a descriptor the rig opened without
// O_CLOEXEC (a device, a library's file) would be. The Go runtime's own
// are all closed on exec.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= hostControlFD {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}

// readLimited reads a file of at most max bytes.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%s is over %d bytes", path, max)
	}
	return data, err
}
