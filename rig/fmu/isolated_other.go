//go:build !linux

package fmu

import (
	"errors"
	"fmt"
	"os"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// HostCommand is the argument that makes a program an isolated FMU's
// process; isolation needs Linux.
const HostCommand = "fmu-host"

func (u *Unit) startIsolated(fmi.Config, Options) (Model, error) {
	return nil, errors.New("hilrig isolates FMUs on Linux only: run them in-process (isolate: false)")
}

// ServeHost refuses: isolation needs Linux.
func ServeHost() int {
	fmt.Fprintln(os.Stderr, "hilrig fmu-host: isolation needs Linux")
	return 2
}
