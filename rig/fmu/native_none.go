//go:build !(linux && (amd64 || arm64)) || hilrig_nofmu

package fmu

import (
	"fmt"
	"runtime"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// Supported reports whether this build can load FMUs.
const Supported = false

// library stands for a loaded library where none can be loaded.
type library struct{}

func loadLibrary(string, *fmi.Description, fmi.Kind) (*library, error) {
	if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
		return nil, fmt.Errorf("this hilrig was built without FMU loading (the tag hilrig_nofmu)")
	}
	return nil, fmt.Errorf("hilrig loads FMUs on linux/amd64 and linux/arm64, not on %s/%s", runtime.GOOS, runtime.GOARCH)
}

func (*library) require(*fmi.Description, fmi.Kind) error { return nil }

func (*library) instantiate(*Unit, fmi.Kind, Options) (Instance, error) {
	panic("no library is ever loaded")
}

func (*library) close() error { return nil }
