package drivers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/firmware/wire"
)

// A pseudo-terminal endpoint is a virtual serial port: the rig reads and
// writes its side through the serial driver, and a program (here the
// example itself) opens the other side as it would a USB adapter.
func ExampleNewPty() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, filepath.Join(dir, "controller"))
	sink := driverstest.NewSink()
	if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop()

	device, err := serial.Open(p.DevicePath(), &serial.Mode{BaudRate: 115200})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer device.Close()
	device.Write([]byte("speed=12.5\n"))
	for deadline := time.Now().Add(5 * time.Second); len(sink.Frames()) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("the rig read %q\n", sink.Payloads())

	p.Write([]byte("brake=1"))
	buf := make([]byte, 64)
	device.SetReadTimeout(5 * time.Second)
	n, _ := device.Read(buf)
	fmt.Printf("the device read %q\n", buf[:n])

	_, leads := drivers.Endpoint(p).(drivers.Leader)
	fmt.Println("writes led by the line time:", leads && p.LineTime(10) > 0)
	// Output:
	// the rig read ["speed=12.5"]
	// the device read "brake=1\n"
	// writes led by the line time: false
}
