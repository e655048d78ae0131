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
// m2s and s2m: 1000-byte UDP payloads every 20 ms through
// edge (100 Mbit/s, 1 ms) – core (4 Mbit/s, 2 ms) – edge; cross: ON/OFF at
// 4 Mbit/s, 3 s ON, 4 s OFF from 5 s, into the core uplink. Device queues are
// 30000 B drop-tail with no traffic-control layer, as in the profile.
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

  NetDeviceContainer mr = edge.Install(nodes.Get(0), nodes.Get(1));
  NetDeviceContainer rr = core.Install(nodes.Get(1), nodes.Get(2));
  NetDeviceContainer rs = edge.Install(nodes.Get(2), nodes.Get(3));
  NetDeviceContainer xr = edge.Install(nodes.Get(4), nodes.Get(1));
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
  // Assign installs a queue disc on every device; remove them so that only
  // the device's 30000 B drop-tail queue remains.
  TrafficControlHelper tch;
  for (const NetDeviceContainer &devs : {mr, rr, rs, xr, ry}) {
    tch.Uninstall(devs);
  }

  uint16_t port = 9000;
  PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sinks = sink.Install(nodes.Get(3));
  sinks.Add(sink.Install(nodes.Get(0)));
  sinks.Add(sink.Install(nodes.Get(5)));
  sinks.Start(Seconds(0));

  UdpClientHelper m2s(irs.GetAddress(1), port);
  m2s.SetAttribute("Interval", TimeValue(MilliSeconds(20)));
  m2s.SetAttribute("PacketSize", UintegerValue(1000));
  m2s.SetAttribute("MaxPackets", UintegerValue(0));
  ApplicationContainer apps = m2s.Install(nodes.Get(0));
  apps.Get(0)->SetStartTime(MicroSeconds(1300));
  UdpClientHelper s2m(imr.GetAddress(0), port);
  s2m.SetAttribute("Interval", TimeValue(MilliSeconds(20)));
  s2m.SetAttribute("PacketSize", UintegerValue(1000));
  s2m.SetAttribute("MaxPackets", UintegerValue(0));
  ApplicationContainer back = s2m.Install(nodes.Get(3));
  back.Get(0)->SetStartTime(MilliSeconds(2));

  OnOffHelper cross("ns3::UdpSocketFactory", InetSocketAddress(iry.GetAddress(1), port));
  cross.SetAttribute("DataRate", StringValue("4Mbps"));
  cross.SetAttribute("PacketSize", UintegerValue(1000));
  cross.SetAttribute("OnTime", StringValue("ns3::ConstantRandomVariable[Constant=3]"));
  cross.SetAttribute("OffTime", StringValue("ns3::ConstantRandomVariable[Constant=4]"));
  ApplicationContainer x = cross.Install(nodes.Get(4));
  x.Start(Seconds(5));

  Simulator::Stop(Seconds(seconds));
  Simulator::Run();
  uint64_t received = 0;
  for (uint32_t i = 0; i < sinks.GetN(); i++) {
    received += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx() / 1000;
  }
  std::cout << "frames received: " << received << "\n";
  Simulator::Destroy();
  return 0;
}
