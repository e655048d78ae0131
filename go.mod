module github.com/hilrig/hilrig

go 1.26.0

require (
	go.bug.st/serial v1.8.0
	go.yaml.in/yaml/v4 v4.0.0
	golang.org/x/sys v0.49.0
	periph.io/x/conn/v3 v3.7.2
	periph.io/x/host/v3 v3.8.5
)

require gonum.org/v1/gonum v0.17.0

require golang.org/x/term v0.47.0 // indirect
