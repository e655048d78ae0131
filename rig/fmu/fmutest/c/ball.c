/*
 * A ball dropped from 1 m: h' = v, v' = g, and where h reaches 0 falling
 * it leaves at v = −e·v; below 0.1 m/s it rests. Its event indicator is
 * h; after a bounce h is the smallest positive double, so that the
 * indicator is already in the domain the ball rises in.
 */
#include <float.h>

#define TOKEN "{hilrig-test-ball}"
#define NX 2
#define NZ 1
#define INTERNAL_STEP 1e-3

enum { VR_TIME, VR_H, VR_DH, VR_V, VR_DV, VR_G, VR_E, VR_RESTING };

static void reset(Instance *m) {
	m->x[0] = 1;
	m->x[1] = 0;
	m->v[VR_G] = -9.81;
	m->v[VR_E] = 0.7;
	m->v[VR_RESTING] = 0;
}

static Status derivatives(Instance *m, double dx[]) {
	dx[0] = m->x[1];
	dx[1] = m->v[VR_RESTING] ? 0 : m->v[VR_G];
	return OK;
}

static int get(Instance *m, unsigned vr, double *out) {
	switch (vr) {
	case VR_TIME: *out = m->time; return 1;
	case VR_H: *out = m->x[0]; return 1;
	case VR_DH: case VR_V: *out = m->x[1]; return 1;
	case VR_DV: *out = m->v[VR_RESTING] ? 0 : m->v[VR_G]; return 1;
	case VR_G: case VR_E: case VR_RESTING: *out = m->v[vr]; return 1;
	}
	return 0;
}

static int set(Instance *m, unsigned vr, double value) {
	switch (vr) {
	case VR_H: m->x[0] = value; return 1;
	case VR_V: m->x[1] = value; return 1;
	case VR_G: case VR_E: m->v[vr] = value; return 1;
	}
	return 0;
}

static void indicators(Instance *m, double z[]) { z[0] = m->x[0]; }

static void update(Instance *m) {
	m->valuesChanged = false;
	if (m->x[0] <= 0 && m->x[1] < 0) {
		m->x[0] = DBL_MIN;
		m->x[1] = -m->v[VR_E] * m->x[1];
		if (m->x[1] < 0.1) {
			m->x[1] = 0;
			m->v[VR_RESTING] = 1;
		}
		m->valuesChanged = true;
	}
}

static Status hook(Instance *m, const char *where) { return OK; }
