//go:build amd64.v3 || arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64

package detmath

// compilerFuses says the compiler fuses x*y + z on this build, so that
// Go's math differs from this package (fuses_not_test.go otherwise).
const compilerFuses = true
