// A dumbbell with ON/OFF cross traffic in ns-3, the topology of
// tests/reference/dumbbell.yaml, to compare simulation speed
// (BENCHMARKS.md). It is not part of the build or the tests.
//
// Build and time it with Debian's libns3-dev (ns-3 3.37):
//
//   g++ -O2 -std=c++17 -o /tmp/ns3-dumbbell tests/reference/ns3-dumbbell.cc \
//       $(pkg-config --cflags --libs ns3-core ns3-network ns3-internet \
//         ns3-point-to-point ns3-point-to-point-layout ns3-applications \
//         ns3-traffic-control)
//   python3 tests/perf/interleave.py 10 '/tmp/ns3-dumbbell 300' \
//       'hilrig sim tests/reference/dumbbell.yaml'
//
// ns-3's PointToPointDumbbellHelper: ten left leaves, each on a 100 Mbit/s,
// 1 ms link to the left router, a 10 Mbit/s, 10 ms bottleneck to the right
// router, ten right leaves on 100 Mbit/s, 1 ms links. Leaves 0 to 7 send
// 1000-byte frames (970 B of UDP payload, 8 B UDP, 20 B IP, 2 B PPP) every
// 10 ms to the right leaf of the same number, starting 0.1 ms apart; leaves
// 8 and 9 are ON/OFF sources of 4 Mbit/s of frames (3880 kbit/s of payload)
// with exponential ON and OFF times of mean 1 s, from 1 s. Offered load
// 10.4 Mbit/s on average: the bottleneck's 60000 B drop-tail queue fills and
// drops. Device queues are drop-tail in bytes with flow control disabled,
// so that they are the only queues, as in the profile (see
// ns3-bottleneck.cc). Over 300 s ns-3 delivers 345 873 frames, hilrig
// 345 747 (the ON/OFF periods are drawn by each simulator's own generator).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/point-to-point-layout-module.h"
#include <cstdlib>
#include <iostream>
using namespace ns3;
int main(int argc, char *argv[]) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 300;
  uint32_t n = 8, cross = 2;
  PointToPointHelper leaf, bottle;
  leaf.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
  leaf.SetChannelAttribute("Delay", StringValue("1ms"));
  leaf.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("30000B"));
  leaf.DisableFlowControl();
  bottle.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
  bottle.SetChannelAttribute("Delay", StringValue("10ms"));
  bottle.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("60000B"));
  bottle.DisableFlowControl();
  PointToPointDumbbellHelper d(n + cross, leaf, n + cross, leaf, bottle);
  InternetStackHelper stack;
  d.InstallStack(stack);
  d.AssignIpv4Addresses(Ipv4AddressHelper("10.1.0.0", "255.255.255.0"), Ipv4AddressHelper("10.2.0.0", "255.255.255.0"),
                        Ipv4AddressHelper("10.3.0.0", "255.255.255.0"));
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  uint16_t port = 9000;
  PacketSinkHelper sink("ns3::UdpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer sinks;
  for (uint32_t i = 0; i < n + cross; i++) sinks.Add(sink.Install(d.GetRight(i)));
  for (uint32_t i = 0; i < n; i++) {
    UdpClientHelper c(d.GetRightIpv4Address(i), port);
    c.SetAttribute("Interval", TimeValue(MilliSeconds(10)));
    c.SetAttribute("PacketSize", UintegerValue(970));
    c.SetAttribute("MaxPackets", UintegerValue(4294967295u));
    ApplicationContainer a = c.Install(d.GetLeft(i));
    a.Start(MicroSeconds(100 * (i + 1)));
  }
  for (uint32_t i = n; i < n + cross; i++) {
    OnOffHelper o("ns3::UdpSocketFactory", InetSocketAddress(d.GetRightIpv4Address(i), port));
    o.SetAttribute("DataRate", StringValue("3880kbps"));
    o.SetAttribute("PacketSize", UintegerValue(970));
    o.SetAttribute("OnTime", StringValue("ns3::ExponentialRandomVariable[Mean=1]"));
    o.SetAttribute("OffTime", StringValue("ns3::ExponentialRandomVariable[Mean=1]"));
    ApplicationContainer a = o.Install(d.GetLeft(i));
    a.Start(Seconds(1));
  }
  Simulator::Stop(Seconds(seconds));
  Simulator::Run();
  uint64_t received = 0;
  for (uint32_t i = 0; i < sinks.GetN(); i++) received += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx() / 970;
  std::cout << "frames received: " << received << "\n";
  Simulator::Destroy();
  return 0;
}
