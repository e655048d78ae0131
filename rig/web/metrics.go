package web

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hilrig/hilrig/rig/record"
)

// The metrics, named and in units as Prometheus asks: seconds, bytes,
// counters ending in _total. They are read from the latest snapshot at
// each scrape.
var (
	runInfoMetric = prometheus.NewDesc("hilrig_run_info",
		"Always 1: the run, by its labels (run_id tells one run from every other).", []string{"profile", "bench", "clock", "seed", "run_id"}, nil)
	runStart = prometheus.NewDesc("hilrig_run_start_time_seconds",
		"When the run's rig started it, in seconds since the Unix epoch.", nil, nil)
	runSeconds = prometheus.NewDesc("hilrig_run_time_seconds",
		"The run's clock: time since it started (virtual or real).", nil, nil)
	runUp = prometheus.NewDesc("hilrig_run_running",
		"1 while the run is going on, 0 before it starts and after it ends.", nil, nil)
	flowSent = prometheus.NewDesc("hilrig_flow_sent_frames_total",
		"Frames that entered a flow's first hop.", []string{"flow"}, nil)
	flowFrames = prometheus.NewDesc("hilrig_flow_frames_total",
		"A flow's frames by fate: delivered (intact), corrupted (delivered with flipped bits), queue_drop, loss_drop, outage_drop, and egress_drop (delivered by the network but not taken by the device: disconnected, or a write error). Sent less these are in flight.",
		[]string{"flow", "status"}, nil)
	flowDelay = prometheus.NewDesc("hilrig_flow_delay_seconds",
		"One-way delay of a flow's delivered frames, from entering the first hop to leaving the last.", []string{"flow"}, nil)
	hopQueueBytes = prometheus.NewDesc("hilrig_hop_queue_bytes",
		"Bytes waiting for a hop's serialiser (not the frame being sent).", []string{"hop"}, nil)
	hopQueueFrames = prometheus.NewDesc("hilrig_hop_queue_frames",
		"Frames waiting for a hop's serialiser.", []string{"hop"}, nil)
	hopHeldFrames = prometheus.NewDesc("hilrig_hop_held_frames",
		"Frames held by a hop's outage in hold mode.", []string{"hop"}, nil)
	hopDown = prometheus.NewDesc("hilrig_hop_outage",
		"1 while a hop's output is down (an outage), by mode.", []string{"hop", "mode"}, nil)
	hopRate = prometheus.NewDesc("hilrig_hop_rate_bits_per_second",
		"A hop's serialisation rate now (absent: the hop only delays).", []string{"hop"}, nil)
	hopDelay = prometheus.NewDesc("hilrig_hop_delay_seconds",
		"A hop's propagation delay now.", []string{"hop"}, nil)
	hopLoss = prometheus.NewDesc("hilrig_hop_loss_ratio",
		"The long-run fraction of frames a hop's loss model loses, as it is set now (0: no loss).", []string{"hop"}, nil)
	endpointConnected = prometheus.NewDesc("hilrig_endpoint_connected",
		"1 while a device endpoint's device is there, 0 while the rig waits for it to come back.", []string{"endpoint"}, nil)
	endpointGaps = prometheus.NewDesc("hilrig_endpoint_gaps_total",
		"Times a device endpoint's device went away.", []string{"endpoint"}, nil)
	endpointFrames = prometheus.NewDesc("hilrig_endpoint_frames_total",
		"Frames a device endpoint read from its device (direction in) and wrote to it (out).", []string{"endpoint", "direction"}, nil)
	endpointBytes = prometheus.NewDesc("hilrig_endpoint_bytes_total",
		"Bytes a device endpoint read from its device (direction in, framing included) and wrote to it (out).", []string{"endpoint", "direction"}, nil)
	endpointBad = prometheus.NewDesc("hilrig_endpoint_bad_frames_total",
		"Frames read from a device endpoint and dropped: too long, or not decodable in its framing.", []string{"endpoint"}, nil)
	endpointWriteErrors = prometheus.NewDesc("hilrig_endpoint_write_errors_total",
		"Frames a device endpoint's device did not take: away, not reading, or failing.", []string{"endpoint"}, nil)
	wireMessages = prometheus.NewDesc("hilrig_endpoint_wire_messages_total",
		"Well-formed rig wire protocol messages an endpoint's sender sent.", []string{"endpoint"}, nil)
	wireCRC = prometheus.NewDesc("hilrig_endpoint_crc_errors_total",
		"Rig wire protocol frames of an endpoint that failed their CRC.", []string{"endpoint"}, nil)
	wireMalformed = prometheus.NewDesc("hilrig_endpoint_malformed_messages_total",
		"Rig wire protocol frames of an endpoint whose CRC held but which are no message (too short, an unknown version or type, a payload that does not fit).", []string{"endpoint"}, nil)
	wireMissed = prometheus.NewDesc("hilrig_endpoint_missed_messages_total",
		"Rig wire protocol messages of an endpoint skipped in its numbering and not received since.", []string{"endpoint"}, nil)
	wireOneWay = prometheus.NewDesc("hilrig_endpoint_one_way_delay_seconds",
		"The one-way delay of an endpoint's last rig wire protocol message, from its sender's clock (once the clock is known).", []string{"endpoint"}, nil)
	modelOutput = prometheus.NewDesc("hilrig_model_output",
		"A model endpoint's output of interest now.", []string{"endpoint", "signal"}, nil)
	modelReference = prometheus.NewDesc("hilrig_model_reference_output",
		"The uncut model's value of the same output now.", []string{"endpoint", "signal"}, nil)
	modelMaxError = prometheus.NewDesc("hilrig_model_max_error",
		"The largest |output − uncut output| so far.", []string{"endpoint", "signal"}, nil)
	modelExchanges = prometheus.NewDesc("hilrig_model_exchanges_total",
		"A model endpoint's exchanges.", []string{"endpoint"}, nil)
	modelOverruns = prometheus.NewDesc("hilrig_model_overruns_total",
		"Exchanges that started after the next one was due.", []string{"endpoint"}, nil)
	syncOut = prometheus.NewDesc("hilrig_model_out_of_sync",
		"1 while a supervised model is out of sync with the hardware's time.", []string{"endpoint"}, nil)
	syncTDiff = prometheus.NewDesc("hilrig_model_time_discrepancy_seconds",
		"The supervisor's t_diff: wall clock less the model's time mapped to it.", []string{"endpoint"}, nil)
	releaseLate = prometheus.NewDesc("hilrig_executor_release_lateness_seconds",
		"How late frames were released to their devices; quantiles over the last snapshot's interval, count and sum over the run.", nil, nil)
	wakeups = prometheus.NewDesc("hilrig_executor_wakeups_total",
		"Times the executor woke for a deadline.", nil, nil)
	ingressDropped = prometheus.NewDesc("hilrig_executor_ingress_dropped_frames_total",
		"Frames read from devices that found the executor's ingress full.", nil, nil)
	skipped = prometheus.NewDesc("hilrig_monitor_skipped_publications_total",
		"Snapshots the executor did not publish because readers held every slot.", nil, nil)
	streamClients = prometheus.NewDesc("hilrig_stream_clients",
		"WebSocket telemetry clients connected.", nil, nil)
	streamDropped = prometheus.NewDesc("hilrig_stream_dropped_clients_total",
		"WebSocket clients dropped for falling behind.", nil, nil)
)

// collector turns the latest snapshot into metrics.
type collector struct {
	srv  *Server
	mu   sync.Mutex // one scrape at a time uses snap
	snap record.Snapshot
}

var _ prometheus.Collector = (*collector)(nil)

func newMetrics(s *Server) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{srv: s}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

func (s *Server) metricsHandler() http.Handler {
	h := promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return methods{http.MethodGet: h.ServeHTTP}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{runInfoMetric, runStart, runSeconds, runUp, flowSent, flowFrames, flowDelay, hopQueueBytes, hopQueueFrames, hopHeldFrames,
		hopDown, hopRate, hopDelay, hopLoss, endpointConnected, endpointGaps, endpointFrames, endpointBytes, endpointBad, endpointWriteErrors,
		wireMessages, wireCRC, wireMalformed, wireMissed, wireOneWay, modelOutput, modelReference, modelMaxError, modelExchanges, modelOverruns, syncOut, syncTDiff,
		releaseLate, wakeups, ingressDropped, skipped, streamClients, streamDropped} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &c.snap
	running := 0.0
	if c.srv.state() == "running" {
		running = 1
	}
	hi := &c.srv.run.hello
	ch <- prometheus.MustNewConstMetric(runInfoMetric, prometheus.GaugeValue, 1, c.srv.run.profile.Name, hi.Bench, hi.Clock, strconv.FormatUint(hi.Seed, 10), hi.RunID)
	ch <- prometheus.MustNewConstMetric(runStart, prometheus.GaugeValue, float64(hi.Started.UnixNano())/1e9)
	ch <- prometheus.MustNewConstMetric(runUp, prometheus.GaugeValue, running)
	ch <- prometheus.MustNewConstMetric(skipped, prometheus.CounterValue, float64(c.srv.mon.Skipped()))
	ch <- prometheus.MustNewConstMetric(streamClients, prometheus.GaugeValue, float64(c.srv.clients.Load()))
	ch <- prometheus.MustNewConstMetric(streamDropped, prometheus.CounterValue, float64(c.srv.dropped.Load()))
	if !c.srv.mon.Read(s) {
		return
	}
	ch <- prometheus.MustNewConstMetric(runSeconds, prometheus.GaugeValue, s.Time.Seconds())
	for i := range s.Flows {
		f := &s.Flows[i]
		ch <- prometheus.MustNewConstMetric(flowSent, prometheus.CounterValue, float64(f.Sent), f.Name)
		for _, st := range []struct {
			status string
			n      uint64
		}{{"delivered", f.Delivered - f.Corrupted}, {"corrupted", f.Corrupted}, {"queue_drop", f.QueueDrops}, {"loss_drop", f.LossDrops}, {"outage_drop", f.OutageDrops}, {"egress_drop", f.EgressDrops}} {
			ch <- prometheus.MustNewConstMetric(flowFrames, prometheus.CounterValue, float64(st.n), f.Name, st.status)
		}
		buckets := make(map[float64]uint64, len(record.DelayBounds))
		for k, b := range record.DelayBounds {
			buckets[b.Seconds()] = f.DelayAtMost[k]
		}
		ch <- prometheus.MustNewConstHistogram(flowDelay, f.Delay.Count, f.DelaySum.Seconds(), buckets, f.Name)
	}
	for _, h := range s.Hops {
		ch <- prometheus.MustNewConstMetric(hopQueueBytes, prometheus.GaugeValue, float64(h.QueueBytes), h.Name)
		ch <- prometheus.MustNewConstMetric(hopQueueFrames, prometheus.GaugeValue, float64(h.QueueFrames), h.Name)
		ch <- prometheus.MustNewConstMetric(hopHeldFrames, prometheus.GaugeValue, float64(h.HeldFrames), h.Name)
		for _, mode := range []string{"drop", "hold"} {
			down := 0.0
			if outageNames[h.Outage] == mode {
				down = 1
			}
			ch <- prometheus.MustNewConstMetric(hopDown, prometheus.GaugeValue, down, h.Name, mode)
		}
		if h.Rate > 0 {
			ch <- prometheus.MustNewConstMetric(hopRate, prometheus.GaugeValue, float64(h.Rate), h.Name)
		}
		ch <- prometheus.MustNewConstMetric(hopDelay, prometheus.GaugeValue, h.Delay.Seconds(), h.Name)
		ch <- prometheus.MustNewConstMetric(hopLoss, prometheus.GaugeValue, h.Loss, h.Name)
	}
	for _, e := range s.Endpoints {
		ch <- prometheus.MustNewConstMetric(endpointConnected, prometheus.GaugeValue, flag(!e.Away), e.Name)
		ch <- prometheus.MustNewConstMetric(endpointGaps, prometheus.CounterValue, float64(e.Gaps), e.Name)
		ch <- prometheus.MustNewConstMetric(endpointFrames, prometheus.CounterValue, float64(e.FramesIn), e.Name, "in")
		ch <- prometheus.MustNewConstMetric(endpointFrames, prometheus.CounterValue, float64(e.FramesOut), e.Name, "out")
		ch <- prometheus.MustNewConstMetric(endpointBytes, prometheus.CounterValue, float64(e.BytesIn), e.Name, "in")
		ch <- prometheus.MustNewConstMetric(endpointBytes, prometheus.CounterValue, float64(e.BytesOut), e.Name, "out")
		ch <- prometheus.MustNewConstMetric(endpointBad, prometheus.CounterValue, float64(e.BadFrames), e.Name)
		ch <- prometheus.MustNewConstMetric(endpointWriteErrors, prometheus.CounterValue, float64(e.WriteErrors), e.Name)
	}
	for _, w := range s.Wire {
		ch <- prometheus.MustNewConstMetric(wireMessages, prometheus.CounterValue, float64(w.Messages), w.Name)
		ch <- prometheus.MustNewConstMetric(wireCRC, prometheus.CounterValue, float64(w.CRCErrors), w.Name)
		ch <- prometheus.MustNewConstMetric(wireMalformed, prometheus.CounterValue, float64(w.Malformed), w.Name)
		ch <- prometheus.MustNewConstMetric(wireMissed, prometheus.CounterValue, float64(w.Missed), w.Name)
		if w.ClockKnown {
			ch <- prometheus.MustNewConstMetric(wireOneWay, prometheus.GaugeValue, w.OneWay.Seconds(), w.Name)
		}
	}
	for _, m := range s.Models {
		if m.Output != "" {
			ch <- prometheus.MustNewConstMetric(modelOutput, prometheus.GaugeValue, m.Value, m.Endpoint, m.Output)
			ch <- prometheus.MustNewConstMetric(modelReference, prometheus.GaugeValue, m.Ideal, m.Endpoint, m.Output)
			ch <- prometheus.MustNewConstMetric(modelMaxError, prometheus.GaugeValue, m.MaxError, m.Endpoint, m.Output)
		}
		ch <- prometheus.MustNewConstMetric(modelExchanges, prometheus.CounterValue, float64(m.Exchanges), m.Endpoint)
		ch <- prometheus.MustNewConstMetric(modelOverruns, prometheus.CounterValue, float64(m.Overruns), m.Endpoint)
		if m.Sync.Supervised {
			out := 0.0
			if m.Sync.OutOfSync {
				out = 1
			}
			ch <- prometheus.MustNewConstMetric(syncOut, prometheus.GaugeValue, out, m.Endpoint)
			ch <- prometheus.MustNewConstMetric(syncTDiff, prometheus.GaugeValue, m.Sync.TDiff.Seconds(), m.Endpoint)
		}
	}
	if t := s.Timing; t.Real {
		q := map[float64]float64{}
		if r := t.RecentRelease; r.Count > 0 {
			q[0.5], q[0.99] = r.P50.Seconds(), r.P99.Seconds()
		}
		sum := t.Release.Mean.Seconds() * float64(t.Release.Count)
		ch <- prometheus.MustNewConstSummary(releaseLate, t.Release.Count, sum, q)
		ch <- prometheus.MustNewConstMetric(wakeups, prometheus.CounterValue, float64(t.Wakeups))
		ch <- prometheus.MustNewConstMetric(ingressDropped, prometheus.CounterValue, float64(t.IngressDropped))
	}
}
