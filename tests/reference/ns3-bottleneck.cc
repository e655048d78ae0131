// The topology of profiles/bottleneck.yaml in ns-3, to compare simulation
// speed (BENCHMARKS.md). It is not part of the build or the tests.
//
// Build and time it with Debian's libns3-dev (ns-3 3.37):
//
//   g++ -O2 -std=c++17 -o /tmp/ns3-bottleneck tests/reference/ns3-bottleneck.cc \
//       $(pkg-config --cflags --libs ns3-core ns3-network ns3-internet \
//         ns3-point-to-point ns3-applications ns3-traffic-control)
//   hyperfine '/tmp/ns3-bottleneck 300'
//
// m2s and s2m: 1000-byte frames every 20 ms through edge (100 Mbit/s, 1 ms)
// – core (4 Mbit/s, 2 ms) – edge; cross: ON/OFF at 4 Mbit/s of frames, 3 s
// ON, 4 s OFF from 5 s, into the core uplink. A frame is 970 B of UDP
// payload, 8 B UDP, 20 B IP and 2 B PPP header: 1000 B on the wire, as in
// the profile (so the cross source's payload rate is 3.88 Mbit/s). The
// device queues are 30000 B drop-tail with flow control disabled, so that
// they are the only queues, as in the profile.
//
// Over 300 s both deliver about 88 000 frames (ns-3 87 959, hilrig 88 366),
// but they split the losses between m2s and cross differently (ns-3 m2s
// 9 960, cross 62 999; hilrig m2s 14 997, cross 58 369). In the saturated
// core queue a cross frame arrives at the very instant the frame ahead
// leaves (both every 2 ms), so which of the two simultaneous events is
// handled first decides whether the next m2s frame finds room: our reading
// is that the two simulators order such ties differently.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdlib>
#include <iostream>

using namespace ns3;

int main(int argc, char *argv[]) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 300;

  NodeContainer nodes;
  nodes.Create(6); // 0 master, 1 r1, 2 r2, 3 slave, 4 cross source, 5 cross sink
  PointToPointHelper edge, core;
  edge.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  edge.SetChannelAttribute("Delay", StringValue("1ms"));
  edge.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("30000B"));
  core.SetDeviceAttribute("DataRate", StringValue("4Mbps"));
  core.SetChannelAttribute("Delay", StringValue("2ms"));
  core.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("30000B"));
  // Without flow control the device's drop-tail queue is the only queue,
  // as in the engine: with it, the device stops its queue once waiting
  // bytes + MTU exceed the limit, and the traffic-control layer drops
  // frames of any size while it is stopped.
  edge.DisableFlowControl();
  core.DisableFlowControl();

  NetDeviceContainer mr = edge.Install(nodes.Get(0), nodes.Get(1));
  NetDeviceContainer rr = core.Install(nodes.Get(1), nodes.Get(2));
  NetDeviceContainer rs = edge.Install(nodes.Get(2), nodes.Get(3));
  // The cross source sits on the core router's input, as the profile's
  // cross flow enters core-up directly: a link of (almost) no time.
  PointToPointHelper direct;
  direct.SetDeviceAttribute("DataRate", StringValue("1000Gbps"));
  direct.SetChannelAttribute("Delay", StringValue("0s"));
  direct.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("30000B"));
  direct.DisableFlowControl();
  NetDeviceContainer xr = direct.Install(nodes.Get(4), nodes.Get(1));
  NetDeviceContainer ry = edge.Install(nodes.Get(2), nodes.Get(5));

  InternetStackHelper stack;
  stack.Install(nodes);
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.1.0", "255.255.255.0");
  Ipv4InterfaceContainer imr = addr.Assign(mr);
  addr.SetBase("10.0.2.0", "255.255.255.0");
  addr.Assign(rr);
  addr.SetBase("10.0.3.0", "255.255.255.0");
  Ipv4InterfaceContainer irs = addr.Assign(rs);
  addr.SetBase("10.0.4.0", "255.255.255.0");
  addr.Assign(xr);
  addr.SetBase("10.0.5.0", "255.255.255.0");
  Ipv4InterfaceContainer iry = addr.Assign(ry);
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  // Assign installs a queue disc on every device. Without flow control the
  // device never stops it, so it hands each packet on at once and the
  // device's 30000 B drop-tail queue is the only one that holds or drops
  // (uninstalling the queue discs of devices without flow control crashes
  // ns-3 3.37).

  uint16_t port = 9000;
  PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sinks = sink.Install(nodes.Get(3)); // m2s
  sinks.Add(sink.Install(nodes.Get(0)));                  // s2m
  sinks.Add(sink.Install(nodes.Get(5)));
  sinks.Start(Seconds(0));

  UdpClientHelper m2s(irs.GetAddress(1), port);
  m2s.SetAttribute("Interval", TimeValue(MilliSeconds(20)));
  m2s.SetAttribute("PacketSize", UintegerValue(970));
  m2s.SetAttribute("MaxPackets", UintegerValue(4294967295u));
  ApplicationContainer apps = m2s.Install(nodes.Get(0));
  apps.Get(0)->SetStartTime(MicroSeconds(1300));
  UdpClientHelper s2m(imr.GetAddress(0), port);
  s2m.SetAttribute("Interval", TimeValue(MilliSeconds(20)));
  s2m.SetAttribute("PacketSize", UintegerValue(970));
  s2m.SetAttribute("MaxPackets", UintegerValue(4294967295u));
  ApplicationContainer back = s2m.Install(nodes.Get(3));
  back.Get(0)->SetStartTime(MilliSeconds(2));

  OnOffHelper cross("ns3::UdpSocketFactory", InetSocketAddress(iry.GetAddress(1), port));
  cross.SetAttribute("DataRate", StringValue("3880kbps"));
  cross.SetAttribute("PacketSize", UintegerValue(970));
  cross.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=3]"));
  cross.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=4]"));
  ApplicationContainer x = cross.Install(nodes.Get(4));
  x.Start(Seconds(5));

  Simulator::Stop(Seconds(seconds));
  Simulator::Run();
  uint64_t received = 0;
  for (uint32_t i = 0; i < sinks.GetN(); i++) {
    received += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx() / 970;
  }
  std::cout << "frames received: " << received << " (s2m " << DynamicCast<PacketSink>(sinks.Get(1))->GetTotalRx() / 970
            << ", m2s " << DynamicCast<PacketSink>(sinks.Get(0))->GetTotalRx() / 970 << ", cross "
            << DynamicCast<PacketSink>(sinks.Get(2))->GetTotalRx() / 970 << ")\n";
  Simulator::Destroy();
  return 0;
}
