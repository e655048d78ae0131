//go:build !(amd64.v3 || arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64)

package detmath

// compilerFuses says the compiler fuses x*y + z on this build (see
// fuses_test.go).
const compilerFuses = false
