// Package supervisor watches that a model endpoint keeps pace with the
// hardware it twins: paper 004's time-discrepancy supervisor.
//
// A model that steps on data (Stepping wait) advances its simulated time h
// only when an input valid for the step has arrived: to step to h+Δh it
// needs a message whose timestamp T satisfies h+Δh−maxage ≤ T ≤ h+Δh
// (Eq. 1), kept in an Inbox. When data stops or arrives late, h falls
// behind the wall clock. The Supervisor measures the discrepancy
//
//	t_diff = t_wc − s2w(h),  s2w(h) = T₀ + h
//
// (paper 004's Eq. 2 with the sign that makes a lagging model positive, and
// its s2w, which it leaves undefined, read as real-time factor 1; see
// ../shared/specs/seed-specs.md §1.7, A1 and A2). T₀ is when h was 0: for a
// model stepping on data, the stamp of its first message, so that h and
// the stamps Eq. 1 compares it with share their epoch (a device that
// starts late is not the model lagging); for one stepping on the clock,
// the run's start. t_diff is computed after each step, when the step's
// computation ends (§1.4's tdiff(now_after_step)), and at checks every Δ
// between steps. While t_diff > θ_safe the model is out of sync: the
// supervisor notifies at once and the model degrades to a shadow that
// commands nothing, catching up with steps of up to J·Δh where queued data
// allows (StepSize) until t_diff ≤ θ_safe again.
//
// Everything here is arithmetic on durations: the executor calls it in
// virtual and in real time alike.
package supervisor
