/*
 * A DC motor's speed from its armature voltage (University of Michigan,
 * Control Tutorials for MATLAB and Simulink, DC Motor Speed: System
 * Modeling): J·w' = K·i − b·w, L·i' = V − R·i − K·w.
 */
#define TOKEN "{hilrig-test-dcmotor}"
#define NX 2
#define NZ 0
#define INTERNAL_STEP 1e-4

enum { VR_TIME, VR_V, VR_W, VR_I, VR_DW, VR_DI, VR_R, VR_L, VR_K, VR_J, VR_B };

static void reset(Instance *m) {
	m->x[0] = m->x[1] = 0;
	m->v[VR_V] = 0;
	m->v[VR_R] = 1;
	m->v[VR_L] = 0.5;
	m->v[VR_K] = 0.01;
	m->v[VR_J] = 0.01;
	m->v[VR_B] = 0.1;
}

static Status derivatives(Instance *m, double dx[]) {
	double *p = m->v, w = m->x[0], i = m->x[1];
	dx[0] = (p[VR_K] * i - p[VR_B] * w) / p[VR_J];
	dx[1] = (p[VR_V] - p[VR_R] * i - p[VR_K] * w) / p[VR_L];
	return OK;
}

static int get(Instance *m, unsigned vr, double *out) {
	double dx[NX];
	switch (vr) {
	case VR_TIME: *out = m->time; return 1;
	case VR_W: *out = m->x[0]; return 1;
	case VR_I: *out = m->x[1]; return 1;
	case VR_DW: case VR_DI: derivatives(m, dx); *out = dx[vr - VR_DW]; return 1;
	case VR_V: case VR_R: case VR_L: case VR_K: case VR_J: case VR_B: *out = m->v[vr]; return 1;
	}
	return 0;
}

static int set(Instance *m, unsigned vr, double value) {
	switch (vr) {
	case VR_W: m->x[0] = value; return 1;
	case VR_I: m->x[1] = value; return 1;
	case VR_V: case VR_R: case VR_L: case VR_K: case VR_J: case VR_B: m->v[vr] = value; return 1;
	}
	return 0;
}

static void indicators(Instance *m, double z[]) {}
static void update(Instance *m) { m->valuesChanged = false; }
static Status hook(Instance *m, const char *where) { return OK; }
