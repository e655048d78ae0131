/*
 * A first-order lag, y' = (u − y)/tau, that misbehaves from the time
 * `at` on, as its parameter `mode` says: 1 dereferences NULL (SIGSEGV),
 * 2 returns an error, 3 never returns, 4 logs `flood` messages of 1 KiB
 * at every step (and every derivative in Model Exchange), 5 gives y as
 * NaN, 6 returns a fatal error, 7 ends the simulation at `at` (a time
 * event), 8 calls abort() (SIGABRT), 9 calls exit(3). Modes 1, 8 and 9
 * log a warning first, as an FMU about to fail might. Mode 0 behaves.
 */
#define TOKEN "{hilrig-test-bad}"
#define NX 1
#define NZ 0
#define INTERNAL_STEP 1e-3

enum { VR_TIME, VR_U, VR_Y, VR_DY, VR_TAU, VR_MODE, VR_AT, VR_FLOOD };
enum { BEHAVE, CRASH, ERROR, HANG, FLOOD, NOT_A_NUMBER, FATAL, ENDS, ABORT, EXIT };

static void reset(Instance *m) {
	m->x[0] = 0;
	m->v[VR_U] = 0;
	m->v[VR_TAU] = 0.1;
	m->v[VR_MODE] = BEHAVE;
	m->v[VR_AT] = 0.5;
	m->v[VR_FLOOD] = 4096;
}

static Status derivatives(Instance *m, double dx[]) {
	dx[0] = (m->v[VR_U] - m->x[0]) / m->v[VR_TAU];
	return OK;
}

static int get(Instance *m, unsigned vr, double *out) {
	switch (vr) {
	case VR_TIME: *out = m->time; return 1;
	case VR_Y:
		*out = m->v[VR_MODE] == NOT_A_NUMBER && m->time >= m->v[VR_AT] ? NAN : m->x[0];
		return 1;
	case VR_DY: derivatives(m, out); return 1;
	case VR_U: case VR_TAU: case VR_MODE: case VR_AT: case VR_FLOOD: *out = m->v[vr]; return 1;
	}
	return 0;
}

static int set(Instance *m, unsigned vr, double value) {
	switch (vr) {
	case VR_Y: m->x[0] = value; return 1;
	case VR_U: case VR_TAU: case VR_MODE: case VR_AT: case VR_FLOOD: m->v[vr] = value; return 1;
	}
	return 0;
}

static void indicators(Instance *m, double z[]) {}
static void update(Instance *m) {
	m->valuesChanged = false;
	if ((int)m->v[VR_MODE] != ENDS) return;
	if (m->time >= m->v[VR_AT] - 1e-12) {
		m->terminate = true;
	} else {
		m->nextEventDefined = true;
		m->nextEvent = m->v[VR_AT];
	}
}

static Status hook(Instance *m, const char *where) {
	int mode = (int)m->v[VR_MODE];
	if (m->time < m->v[VR_AT]) return OK;
	switch (mode) {
	case CRASH: {
		say(m, Warning, "logAll", "dereferencing NULL at t = %g in %s", m->time, where);
		volatile int *nowhere = NULL;
		*nowhere = 1;
		break;
	}
	case ERROR:
#if FMI_VERSION == 2
		/* A double, a string and an int, for the importer's formatting. */
		if (m->logger) m->logger(m->env, m->name, Error, "logStatusError", "deliberate error at t = %g in %s (mode %d)", m->time, where, mode);
#else
		say(m, Error, "logStatusError", "deliberate error at t = %g in %s (mode %d)", m->time, where, mode);
#endif
		return Error;
	case HANG: {
		volatile int spin = 1;
		while (spin) {
		}
		break;
	}
	case FLOOD: {
		char line[1001];
		memset(line, 'x', 1000);
		line[1000] = 0;
		int n = (int)m->v[VR_FLOOD];
		for (int k = 1; k <= n; k++) {
#if FMI_VERSION == 2
			if (m->logger) m->logger(m->env, m->name, Warning, "logAll", "message %d of %d at t = %g: %s", k, n, m->time, line);
#else
			say(m, Warning, "logAll", "message %d of %d at t = %g: %s", k, n, m->time, line);
#endif
		}
		break;
	}
	case ABORT:
		say(m, Warning, "logAll", "aborting at t = %g in %s", m->time, where);
		abort();
	case EXIT:
		say(m, Warning, "logAll", "exiting at t = %g in %s", m->time, where);
		exit(3);
	case FATAL:
		say(m, Fatal, "logStatusFatal", "deliberate fatal error at t = %g", m->time);
		return Fatal;
	}
	return OK;
}
